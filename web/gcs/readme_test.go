package gcs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goFence is a fenced Go sample of a markdown text.
var goFence = regexp.MustCompile("(?ms)^```go\n(.*?)^```")

// sampleFile wraps a sample of the docs as a reader would paste it into a handler's set-up: a
// function given ctx, in a package that has the imports the sample names and the app's own
// currentUser (its sign-in), which the samples call and we cannot write for the reader.
const sampleFile = `package main

import (
	"context"
	"log"
	"net/http"

	"github.com/mediaupload/mediaupload/web/gcs"
)

var (
	_ = log.Fatal
	_ = http.Handle
	_ = gcs.NewClient
)

func currentUser(r *http.Request) (string, bool) { return r.Header.Get("X-User"), true }

func sample(ctx context.Context) {
%s
}

func main() { sample(context.Background()) }
`

// TestDocsGoSamplesCompile builds every Go sample of README.md and docs/*.md with the go tool,
// through an overlay (nothing is written into the tree): a sample that no longer compiles
// against this package fails here. web/test/types/samples.mjs checks the JS samples and skips
// these for this test.
func TestDocsGoSamplesCompile(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	docs = append([]string{filepath.Join(root, "README.md")}, docs...)
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")

	found := 0
	for _, doc := range docs {
		text, err := os.ReadFile(doc)
		require.NoError(t, err)
		for i, m := range goFence.FindAllStringSubmatch(string(text), -1) {
			found++
			name := filepath.Base(doc)
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				src := filepath.Join(dir, "main.go")
				require.NoError(t, os.WriteFile(src, []byte(strings.Replace(sampleFile, "%s", m[1], 1)), 0o644))
				virtual := filepath.Join(root, "web", "gcs", "docsample", "main.go")
				overlay := filepath.Join(dir, "overlay.json")
				require.NoError(t, os.WriteFile(overlay, []byte(`{"Replace":{"`+virtual+`":"`+src+`"}}`), 0o644))
				cmd := exec.Command(goTool, "build", "-o", os.DevNull, "-overlay", overlay, "./web/gcs/docsample")
				cmd.Dir = root
				out, err := cmd.CombinedOutput()
				assert.NoError(t, err, "%s, Go sample %d does not compile:\n%s", name, i+1, out)
			})
		}
	}
	require.Positive(t, found, "README.md shows the backend in Go: a sample was expected")
}
