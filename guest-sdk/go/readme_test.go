package cairn

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The README's Go programs build: each ```go block that is a main package is built for
// wasip1 (as `cairn up` builds one) against this SDK, with a manifest beside it for the
// providers that embed one. A sample that stops compiling fails the tests.
func TestTheReadmesExamplesBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with the go command")
	}
	text, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	sdk, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	goCommand := filepath.Join(runtime.GOROOT(), "bin", "go")
	blocks := strings.Split(string(text), "```go\n")[1:]
	built := 0
	for i, block := range blocks {
		source, _, _ := strings.Cut(block, "```")
		if !strings.HasPrefix(source, "package main") {
			continue
		}
		dir := t.TempDir()
		files := map[string]string{
			"main.go":    source,
			"cairn.json": `{"name": "hello", "version": "0.1.0"}`,
			"go.mod": "module readme\n\ngo 1.24\n\nrequire cairn.invalid/sdk v0.1.0\n\n" +
				"replace cairn.invalid/sdk => " + sdk + "\n",
		}
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(goCommand, "build", "-buildmode=c-shared", "-o", filepath.Join(dir, "out.wasm"), ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOWORK=off", "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("README block %d does not build: %v\n%s\n%s", i+1, err, out, source)
		}
		built++
	}
	if built < 2 {
		t.Fatalf("built %d README programs; the provider and the program should both be there", built)
	}
}
