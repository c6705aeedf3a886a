package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
)

// Root is the e2e folder of the source tree (holding pom.xml, bin/, config/), found from this
// file's location so tests work from any package directory. E2E_ROOT overrides it.
func Root() string {
	if r := os.Getenv("E2E_ROOT"); r != "" {
		return r
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// OutDir is the folder that keeps a test's broker and app directories and its report:
// e2e/out/<test name> (E2E_OUT overrides e2e/out). It is emptied first, so it always holds the
// latest run; it is kept after the test, so a failure's logs stay there.
func OutDir(test string) (string, error) {
	dir := filepath.Join(OutBase(), unsafeName.ReplaceAllString(test, "_"))
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("clean %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	return dir, nil
}

// OutBase is the folder of the tests' out dirs: e2e/out, or E2E_OUT.
func OutBase() string {
	if base := os.Getenv("E2E_OUT"); base != "" {
		return base
	}
	return filepath.Join(Root(), "out")
}

// CheckBuilt fails with the build command when a module's Maven classpath is missing.
func CheckBuilt(modules ...string) error {
	for _, m := range modules {
		lib := filepath.Join(Root(), m, "target", "lib")
		if st, err := os.Stat(lib); err != nil || !st.IsDir() {
			return fmt.Errorf("%s missing: build with `make e2e-build` (mvn -B -q -f e2e/pom.xml package)", lib)
		}
	}
	return nil
}
