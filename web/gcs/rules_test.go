package gcs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Cloud Storage's naming rules (https://cloud.google.com/storage/docs/objects#naming).
func TestCheckName(t *testing.T) {
	for name, ok := range map[string]bool{
		"a":                            true,
		"dir/sub/file name (1).png":    true,
		"ünïcödé/日本語.txt":              true,
		strings.Repeat("a", 1024):      true,
		strings.Repeat("a", 1025):      false,
		"":                             false,
		".":                            false,
		"..":                           false,
		"./a":                          true,
		".well-known/acme-challenge/x": false,
		".well-known/other":            true,
		"a\rb":                         false,
		"a\nb":                         false,
		"a\tb":                         false,
		"a\x7fb":                       false,
		"a\u0084b":                     false,
		"a\u0085b":                     true, // NEL is legal XML 1.0
		"a\u009fb":                     false,
		"a\u00a0b":                     true,
		string([]byte{'a', 0xff, 'b'}): false,
		"#[]*? are legal, if unwise":   true,
	} {
		assert.Equal(t, ok, checkName(name) == nil, "%q", name)
	}
}

func TestTypeAllowed(t *testing.T) {
	patterns := []string{"image/*", "application/pdf"}
	for typ, ok := range map[string]bool{
		"image/png":                true,
		"IMAGE/PNG":                true,
		"image/svg+xml; charset=x": true,
		"application/pdf":          true,
		"application/pdf;v=1":      true,
		"application/pdfx":         false,
		"imagex/png":               false,
		"text/html":                false,
		"":                         false,
	} {
		assert.Equal(t, ok, typeAllowed(patterns, typ), typ)
	}
	assert.True(t, typeAllowed(nil, "anything/at-all"))
	assert.True(t, typeAllowed([]string{"*/*"}, "text/html"))
}

func TestOriginForm(t *testing.T) {
	for in, want := range map[string]string{
		"https://app.example.com":      "https://app.example.com",
		"HTTPS://App.Example.COM:443/": "https://app.example.com",
		"http://127.0.0.1:80":          "http://127.0.0.1",
		"http://127.0.0.1:8080":        "http://127.0.0.1:8080",
		"http://[::1]:8080":            "http://[::1]:8080",
		"app.example.com":              "",
		"https://app.example.com/path": "",
		"https://user@app.example.com": "",
		"https://app.example.com/?q=1": "",
		"null":                         "",
	} {
		got, err := origin(in)
		if want == "" {
			assert.Error(t, err, in)
		} else {
			assert.Equal(t, want, got, in)
		}
	}
}
