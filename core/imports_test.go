package core

import (
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every page downloads the wasm: measured with Go 1.26 for GOOS=js, fmt alone adds about
// 450 KB, net/url about 660 KB, net/http over 2 MB. core (and everything the wasm links) must
// do without them.
var heavy = []string{"syscall/js", "net/http", "net/url", "fmt", "encoding/json", "mime/multipart"}

func TestCoreImportsNothingHeavy(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, p := range heavy {
			if strings.Contains(string(src), "\""+p+"\"") {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
}

// linkedOnlyNatively are packages core uses outside the browser alone: package time (through
// clock_std.go) costs the wasm 211 KB raw, 51 KB gzipped (clock.go). strings links unicode, whose
// init keeps every Unicode table; with hash/crc32 and encoding/base64, 9 KB gzipped (text.go,
// crc32c.go).
var linkedOnlyNatively = []string{"time", "strings", "unicode", "hash/crc32", "encoding/base64"}

// What the wasm binary links, all the way down, holds none of the heavy packages (syscall/js
// aside, which is its reason to be), nor package time.
func TestWasmLinksNothingHeavy(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "../wasm")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.CombinedOutput()
	if err != nil {
		_, statErr := os.Stat("../wasm")
		require.NoError(t, statErr, "no wasm package")
		require.NoError(t, err, "go list: %s", out)
	}
	deps := strings.Fields(string(out))
	for _, p := range append(heavy[1:], linkedOnlyNatively...) {
		assert.NotContains(t, deps, p, "the wasm links %s", p)
	}
}

// Every file under jsbridge/ and wasm/ carries the js && wasm build constraint, so a native
// build never sees them.
func TestJSFilesAreBuildTagged(t *testing.T) {
	for _, dir := range []string{"../jsbridge", "../wasm"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NotEmpty(t, files, "no Go files in %s", dir)
		for _, f := range files {
			ctx := build.Default
			ctx.GOOS, ctx.GOARCH = "linux", "amd64"
			ok, err := ctx.MatchFile(dir, filepath.Base(f))
			require.NoError(t, err)
			src, _ := os.ReadFile(f)
			assert.True(t, !ok && strings.Contains(string(src), "//go:build js && wasm"), "%s lacks //go:build js && wasm", f)
		}
	}
}
