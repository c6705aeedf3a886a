package streamshift_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The import rules (docs/architecture.md), checked on what
// `go list -deps` says the module's packages import without their tests (a
// test may import what it needs: kfake, the package it exercises). Edit the
// rules in importRules, and nowhere else.
//
// A pattern is a package path of the module relative to its root ("route";
// "coordinator/..." is coordinator and every package below it; "..." is
// every package of the module) or a full import path outside it, with the
// same "/..." suffix.

const module = "github.com/streamshift/streamshift"

const (
	kgo   = "github.com/twmb/franz-go/pkg/kgo/..."
	kadm  = "github.com/twmb/franz-go/pkg/kadm/..."
	kfake = "github.com/twmb/franz-go/pkg/kfake/..."
	kmsg  = "github.com/twmb/franz-go/pkg/kmsg/..."
	kerr  = "github.com/twmb/franz-go/pkg/kerr/..."
)

// importRule is one rule: the packages matching pkgs and not except must not
// import deny (with transitive: nor depend on it through another package),
// and, with allow set, import nothing but the standard library and allow.
type importRule struct {
	rule       string
	pkgs       []string
	except     []string
	deny       []string
	transitive bool
	allow      []string
}

var importRules = []importRule{
	{
		rule: "only route, cluster, cmd and e2e import proxy",
		pkgs: []string{"..."}, except: []string{"proxy/...", "route", "cluster", "cmd/...", "e2e/..."},
		deny: []string{"proxy/..."},
	},
	{
		// cluster is "one address" at run time (cluster/doc.go): the
		// command builds it and hands it to route as its Cluster, which
		// route knows only as an interface.
		rule: "only cmd imports cluster",
		pkgs: []string{"..."}, except: []string{"cluster", "cmd/..."},
		deny: []string{"cluster"},
	},
	{
		// The wire between instances (proxy/peer/doc.go) is plain net
		// and crypto/tls: a link's reader may block, which must never
		// happen on a gnet loop, and a call's bytes are read without a
		// connection.
		rule: "proxy/peer imports no gnet",
		pkgs: []string{"proxy/peer/..."},
		deny: []string{"github.com/panjf2000/gnet/..."}, transitive: true,
	},
	{
		// proxy builds on proxy/peer (its adapters run the calls on its
		// client connections), never the other way: what a link needs of
		// proxy (the handlers, the upstream dial of a link's
		// authentication, the TLS configurations) is handed in.
		rule: "proxy/peer imports nothing of proxy, not even through another package",
		pkgs: []string{"proxy/peer/..."},
		deny: []string{"proxy", "proxy/proxytest"}, transitive: true,
	},
	{
		rule: "only proxy, upstream, cmd and e2e import kgo and kadm",
		pkgs: []string{"..."}, except: []string{"proxy/...", "upstream/...", "cmd/...", "e2e/..."},
		deny: []string{kgo, kadm},
	},
	{
		// streamshift demo runs the proxy in front of an embedded kfake
		// cluster, so that a first run needs no Kafka: the command is the
		// one package that ships it.
		rule: "kfake only in tests (and in cmd/streamshift, for streamshift demo)",
		pkgs: []string{"..."}, except: []string{"cmd/streamshift"},
		deny: []string{kfake},
	},
	{
		rule: "proxy/proxytest only in tests",
		pkgs: []string{"..."},
		deny: []string{"proxy/proxytest"},
	},
	{
		rule: "internal/testwait only in tests",
		pkgs: []string{"..."},
		deny: []string{"internal/testwait"},
	},
	{
		rule: "internal/testlog only in tests",
		pkgs: []string{"..."},
		deny: []string{"internal/testlog"},
	},
	{
		rule: "internal/classictest only in tests",
		pkgs: []string{"..."},
		deny: []string{"internal/classictest"},
	},
	{
		// The proxy owns the connections and nothing of a group
		// (proxy/doc.go): what a key means is its interceptor's.
		rule: "proxy is the wire: no coordinator, route, cluster, upstream, migration, translate, status, capture or config, not even through another package",
		pkgs: []string{"proxy/..."},
		deny: []string{"coordinator/...", "route/...", "cluster", "upstream/...", "migration/...", "translate/...", "status/...", "capture/...", "config/..."}, transitive: true,
	},
	{
		rule: "coordinator is the runtime: no proxy, route, upstream, translate, migration, kgo or kadm, not even through another package",
		pkgs: []string{"coordinator/..."},
		deny: []string{"proxy/...", "route/...", "upstream/...", "translate/...", "migration/...", kgo, kadm}, transitive: true,
	},
	{
		rule:  "coordinator/streams is pure: the standard library, kmsg, kerr and classicstreams only",
		pkgs:  []string{"coordinator/streams/..."},
		allow: []string{kmsg, kerr, "classicstreams/...", "coordinator/streams/..."},
	},
	{
		rule: "translate is the classic wire only: no proxy, route, migration, upstream, kgo or kadm, not even through another package",
		pkgs: []string{"translate/..."},
		deny: []string{"proxy/...", "route/...", "migration/...", "upstream/...", kgo, kadm}, transitive: true,
	},
	{
		// migration drives translate (its hand-backs re-run held joins
		// through the translator), never the other way; it reaches the
		// cluster through interfaces upstream and route implement.
		rule: "migration is above translate and below route: no proxy, route, upstream, kgo or kadm, not even through another package",
		pkgs: []string{"migration/..."},
		deny: []string{"proxy/...", "route/...", "upstream/...", kgo, kadm}, transitive: true,
	},
	{
		// The status page reads the coordinator through its entry points
		// and hears the coordinator's and the migration's events; it
		// never reaches the cluster or the proxy itself.
		rule: "status only reads the coordinator and hears events: no proxy, route, upstream, kgo or kadm, not even through another package",
		pkgs: []string{"status/..."},
		deny: []string{"proxy/...", "route/...", "upstream/...", kgo, kadm}, transitive: true,
	},
}

// listedPackage is what the rules read of `go list -json`.
type listedPackage struct {
	ImportPath string
	Standard   bool
	Imports    []string
	Deps       []string
	Module     *struct{ Path string }
}

// TestImportRules checks every rule against the packages built by default
// and with the e2e and kafkajava tags.
func TestImportRules(t *testing.T) {
	reported := map[string]bool{}
	for _, tags := range []string{"", "e2e,kafkajava"} {
		pkgs := goList(t, tags)
		for _, r := range importRules {
			applies, broken := r.check(pkgs)
			if applies == 0 {
				// A rule may come before its package (coordinator/streams):
				// it applies once the package exists.
				t.Logf("tags %q: no package for the rule %q yet", tags, r.rule)
			}
			for _, b := range broken {
				// Once for both tag sets.
				if key := b + "\x00" + r.rule; !reported[key] {
					reported[key] = true
					t.Errorf("%s%s, against the rule %q", b, tagNote(tags), r.rule)
				}
			}
		}
	}
}

// check returns how many packages the rule applies to and what breaks it.
func (r importRule) check(pkgs map[string]*listedPackage) (applies int, broken []string) {
	for _, p := range sortedModulePackages(pkgs) {
		if !matchesAny(p.ImportPath, r.pkgs) || matchesAny(p.ImportPath, r.except) {
			continue
		}
		applies++
		for _, imp := range p.Imports {
			if matchesAny(imp, r.deny) {
				broken = append(broken, rel(p.ImportPath)+" imports "+imp)
			}
			if dep := pkgs[imp]; r.allow != nil && (dep == nil || !dep.Standard) && !matchesAny(imp, r.allow) {
				broken = append(broken, rel(p.ImportPath)+" imports "+imp)
			}
		}
		if !r.transitive {
			continue
		}
		for _, dep := range p.Deps {
			if !matchesAny(dep, r.deny) {
				continue
			}
			chain := importChain(pkgs, p.ImportPath, dep)
			if len(chain) < 3 {
				continue // a direct import, reported above
			}
			between := chain[1 : len(chain)-1]
			if slices.ContainsFunc(between, func(c string) bool { return matchesAny(c, r.deny) }) {
				continue // reported at the first denied package of the chain
			}
			broken = append(broken, rel(p.ImportPath)+" depends on "+dep+" (through "+strings.Join(relAll(between), " → ")+")")
		}
	}
	return applies, broken
}

// goList returns the module's packages and all they depend on, by import
// path.
func goList(t *testing.T, tags string) map[string]*listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json", "-tags="+tags, "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -tags=%q: %v\n%s", tags, err, stderr.String())
	}
	pkgs := map[string]*listedPackage{}
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		p := new(listedPackage)
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list -tags=%q: %v", tags, err)
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs
}

func sortedModulePackages(pkgs map[string]*listedPackage) []*listedPackage {
	var out []*listedPackage
	for _, p := range pkgs {
		if p.Module != nil && p.Module.Path == module {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *listedPackage) int { return strings.Compare(a.ImportPath, b.ImportPath) })
	return out
}

// matchesAny reports whether the import path matches one of the patterns.
func matchesAny(path string, patterns []string) bool {
	for _, pat := range patterns {
		if first, _, _ := strings.Cut(pat, "/"); pat == "..." || !strings.Contains(first, ".") {
			pat = module + "/" + pat // relative to the module's root
		}
		if base, ok := strings.CutSuffix(pat, "/..."); ok {
			if path == base || strings.HasPrefix(path, base+"/") {
				return true
			}
		} else if path == pat {
			return true
		}
	}
	return false
}

// importChain is a shortest chain of imports from pkg to dep, both
// included; nil if there is none.
func importChain(pkgs map[string]*listedPackage, pkg, dep string) []string {
	prev := map[string]string{pkg: ""}
	for queue := []string{pkg}; len(queue) > 0 && prev[dep] == ""; queue = queue[1:] {
		if p := pkgs[queue[0]]; p != nil {
			for _, imp := range p.Imports {
				if _, seen := prev[imp]; !seen {
					prev[imp] = queue[0]
					queue = append(queue, imp)
				}
			}
		}
	}
	if _, ok := prev[dep]; !ok {
		return nil
	}
	chain := []string{dep}
	for cur := dep; cur != pkg; {
		cur = prev[cur]
		chain = append([]string{cur}, chain...)
	}
	return chain
}

func relAll(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = rel(p)
	}
	return out
}

// rel is an import path of the module relative to its root.
func rel(path string) string {
	if path == module {
		return "."
	}
	return strings.TrimPrefix(path, module+"/")
}

func tagNote(tags string) string {
	if tags == "" {
		return ""
	}
	return " (tags " + tags + ")"
}
