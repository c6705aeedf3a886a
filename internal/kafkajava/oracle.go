// Package kafkajava runs the Java oracles of bench/assignor-java (Kafka's own
// classes behind a JSON-in, JSON-out main) for the differential tests built
// with the kafkajava tag.
// It owns the oracles' process and JSON only; it never builds them (the
// Maven build does) and only tests import it.
package kafkajava

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Oracle is one main class of bench/assignor-java.
type Oracle struct {
	classpath string
	mainClass string
}

// Find locates bench/assignor-java from the module root above the test's
// working directory and skips t when its Maven build is missing, so callers
// find the oracle before generating their cases.
func Find(t testing.TB, mainClass string) Oracle {
	t.Helper()
	javaDir := filepath.Join(moduleRoot(), "bench", "assignor-java")
	jar := filepath.Join(javaDir, "target", "assignor-java-1.0.jar")
	if _, err := os.Stat(jar); err != nil {
		t.Skip("bench/assignor-java is not built (mvn package)")
	}
	return Oracle{
		classpath: jar + string(os.PathListSeparator) + filepath.Join(javaDir, "target", "lib", "*"),
		mainClass: mainClass,
	}
}

// Run hands inputs to the oracle as a JSON file and decodes the JSON file it
// writes back into results. Java's stderr goes to the test's stderr.
func (o Oracle) Run(t testing.TB, inputs, results any) {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "inputs.json"), filepath.Join(dir, "results.json")
	raw, err := json.Marshal(inputs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("java", "-cp", o.classpath, o.mainClass, in, out)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	raw, err = os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, results); err != nil {
		t.Fatal(err)
	}
}

// moduleRoot is the nearest directory above the working directory holding
// go.mod (go test runs in the package's directory), or "." when none does.
func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "."
		}
		dir = parent
	}
}
