package coordinator

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The file-level dependency graphs of package coordinator and of package
// streams (without their tests): file a depends on file b when a uses an
// object (type, func, method, field, var, const) declared in b, as
// go/types' Uses and Selections say. A reader reads a package bottom-up
// when that graph has no cycles a reader must untangle: in streams the
// model (modelFiles) uses no operation and no file cycle exists; in
// coordinator the only cycle is the runtime's (runtimeFiles).
//
// go test -run TestFileDependencies -v ./coordinator/ prints the strongly
// connected components of more than one file; with FILEDEPS_EDGES=1 every
// edge, with one object it uses.

// modelFiles are the data model of a streams group (package streams): the
// records and their constructors, the group and its members, tasks, what a
// group keeps in memory, and replay. They use nothing but each other.
var modelFiles = []string{
	"records.go", "record_helpers.go", "tasks.go", "group.go", "group_memory.go",
	"configured_topology.go", "errors.go", "replay.go", "handback_state.go",
}

// runtimeFiles may form one cycle: the coordinator holds the executors,
// an executor holds its group's timers, a timer fires a change, and a
// change commits through the coordinator (Kafka's CoordinatorRuntime).
// Nothing else joins it: a migrating group's state sits behind the queue's
// hook (queueHook: after a work, when the group goes) and a held request is
// an opaque answer the executor keeps by key, so migration_state.go and
// the classic files use the runtime and are not used by it.
var runtimeFiles = []string{"change.go", "coordinator.go", "executor.go", "timers.go"}

func TestFileDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the packages with go list -export")
	}
	t.Run("coordinator", func(t *testing.T) {
		if largest := checkFileCycles(t, fileDependencies(t, "."), runtimeFiles); largest > len(runtimeFiles) {
			t.Errorf("the runtime's file loop is %d files, at most %d may be", largest, len(runtimeFiles))
		}
	})
	t.Run("streams", func(t *testing.T) {
		deps := fileDependencies(t, "streams")
		checkFileCycles(t, deps, nil)
		for _, f := range modelFiles {
			if _, ok := deps[f]; !ok {
				t.Errorf("model file %s is not in the package", f)
			}
			for _, d := range slices.Sorted(mapKeys(deps[f])) {
				if !slices.Contains(modelFiles, d) {
					t.Errorf("model file %s uses %s of %s, which is no model file", f, deps[f][d], d)
				}
			}
		}
	})
}

// checkFileCycles fails for every file in a file cycle that is not one of
// allowed, logs the edges with FILEDEPS_EDGES set, and returns the size of
// the largest cycle.
func checkFileCycles(t *testing.T, deps map[string]map[string]string, allowed []string) (largest int) {
	t.Helper()
	for _, c := range stronglyConnected(deps) {
		if len(c) > 1 {
			t.Logf("cycle of %d files: %s", len(c), strings.Join(c, " "))
			for _, f := range c {
				if !slices.Contains(allowed, f) {
					t.Errorf("%s is in a file cycle (%s): only %v may be", f, strings.Join(c, " "), allowed)
				}
			}
		}
		largest = max(largest, len(c))
	}
	t.Logf("%d files, largest strongly connected component: %d files", len(deps), largest)
	if os.Getenv("FILEDEPS_EDGES") != "" {
		for _, f := range slices.Sorted(mapKeys(deps)) {
			for _, d := range slices.Sorted(mapKeys(deps[f])) {
				t.Logf("%s -> %s (%s)", f, d, deps[f][d])
			}
		}
	}
	return largest
}

func mapKeys[M ~map[K]V, K comparable, V any](m M) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// fileDependencies maps each non-test file of the package in dir to the
// files it uses, with one object used for each (the first found, for
// messages).
func fileDependencies(t *testing.T, dir string) map[string]map[string]string {
	t.Helper()
	exports := exportData(t, dir)
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	})
	info := &types.Info{
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	pkg, err := (&types.Config{Importer: imp}).Check(filepath.Base(dir), fset, files, info)
	if err != nil {
		t.Fatal(err)
	}
	deps := map[string]map[string]string{}
	for _, f := range files {
		deps[filepath.Base(fset.Position(f.Pos()).Filename)] = map[string]string{}
	}
	add := func(at token.Pos, obj types.Object) {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			return
		}
		from, to := filepath.Base(fset.Position(at).Filename), filepath.Base(fset.Position(obj.Pos()).Filename)
		if from == to {
			return
		}
		if _, ok := deps[from][to]; !ok {
			deps[from][to] = obj.Name()
		}
	}
	for id, obj := range info.Uses {
		add(id.Pos(), obj)
	}
	for sel, s := range info.Selections {
		add(sel.Sel.Pos(), s.Obj())
	}
	return deps
}

// exportData maps the import paths the package in dir depends on to their
// compiled export data, as go list -export builds it.
func exportData(t *testing.T, dir string) map[string]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Export", "./"+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.String())
	}
	exports := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
	}
	return exports
}

// stronglyConnected returns the strongly connected components of the graph
// (Tarjan), each sorted, largest first.
func stronglyConnected(g map[string]map[string]string) [][]string {
	index := map[string]int{}
	low := map[string]int{}
	on := map[string]bool{}
	var stack []string
	var out [][]string
	var visit func(v string)
	visit = func(v string) {
		index[v] = len(index)
		low[v] = index[v]
		stack = append(stack, v)
		on[v] = true
		for _, w := range slices.Sorted(mapKeys(g[v])) {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var c []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				c = append(c, w)
				if w == v {
					break
				}
			}
			slices.Sort(c)
			out = append(out, c)
		}
	}
	for _, v := range slices.Sorted(mapKeys(g)) {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	slices.SortStableFunc(out, func(a, b []string) int { return len(b) - len(a) })
	return out
}
