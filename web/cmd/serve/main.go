// Command serve runs the mediaupload demo: the demo page, the built module
// (dist/), the strict reference server and fake-gcs-server, all on one
// address, so one `./build.sh serve` is all a newcomer needs.
//
//	go run ./web/cmd/serve -dist dist [-addr 127.0.0.1:8080] [-tls-addr 127.0.0.1:8443] [-data DIR] [-bucket NAME] [-allow-origin O,...]
//
// Routes:
//
//	/                              the demo page (web/demo)
//	/dist/                         the module as built by ./build.sh (the wasm .br or .gz when accepted)
//	/ref/upload/storage/v1/b/B/o   the strict reference server (web/refserver)
//	/ref/_ref/...                  its control API: objects, faults, log
//	/upload/storage/v1/b/B/o       fake-gcs-server 1.56.1, behind a CORS layer
//	/storage/v1/..., /download/... fake-gcs-server's JSON API (listing, download)
//	/api/config, /api/throttle     the demo's own settings (GET /api/throttle: the network speed set)
//	/api/gcs/session               the demo's backend (package web/gcs): POST {name, size, type, metadata}
//	                               starts a session in fake-gcs-server for the page (-bucket: in a real bucket)
//	/api/gcs/signed                with -bucket only: a signed URL for the XML API's resumable start
//	/examples/, /node_modules/     the widget examples (web/examples) and their widgets' packages
//
// # HTTPS and HTTP/2
//
// With -tls-addr (or MEDIAUPLOAD_TLS_ADDR) the same site is also served over
// HTTPS on that address, side by side with HTTP, one state: HTTP/2 and
// HTTP/1.1 offered by ALPN, so a browser speaks HTTP/2 there (the only
// version over which Chromium streams a request body). The certificate is
// self-signed for 127.0.0.1, ::1 and localhost and made at every start
// (refserver.NewTestCertificate): a browser warns once, and Chromium trusts it
// without a warning with the --ignore-certificate-errors-spki-list= the
// second line prints. The first line then names both addresses:
//
//	mediaupload demo: http://127.0.0.1:8080/ https://127.0.0.1:8443/
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mediaupload/mediaupload/web/netlink"
	"github.com/mediaupload/mediaupload/web/refserver"
)

const (
	defaultAddr   = "127.0.0.1:8080"
	defaultBucket = "demo"
	addrEnv       = "MEDIAUPLOAD_ADDR"
	tlsAddrEnv    = "MEDIAUPLOAD_TLS_ADDR"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// config is what the flags and the environment decide.
type config struct {
	addr    string
	tlsAddr string // "" = no HTTPS
	dist    string
	demoDir string // "" = the embedded copy of web/demo
	dataDir string // "" = in memory
	// examples and modules: the widget example pages (web/examples) and the npm folder that
	// holds their widgets; served under /examples/ and /node_modules/.
	examples string
	modules  string
	bucket   string // fake-gcs-server's and the reference server's
	// realBucket (-bucket): the backend starts its sessions there, with Application Default
	// Credentials, instead of in fake-gcs-server's bucket.
	realBucket   string
	allowOrigins []string // the backend's origins besides the demo's own
}

func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := defaultAddr
	if env := getenv(addrEnv); env != "" {
		addr = env
	}
	fs.StringVar(&c.addr, "addr", addr, "address to listen on (also "+addrEnv+"); port 0 picks a free port")
	fs.StringVar(&c.tlsAddr, "tls-addr", getenv(tlsAddrEnv), "also serve HTTPS (HTTP/2 and HTTP/1.1) on this address, with a self-signed certificate made at start (also "+tlsAddrEnv+"); \"\" = HTTP only")
	fs.StringVar(&c.dist, "dist", "dist", "folder holding the built module (mediaupload.js, mediaupload.wasm, …)")
	fs.StringVar(&c.demoDir, "demo", "", "serve the demo page from this folder instead of the embedded copy (for editing web/demo)")
	fs.StringVar(&c.dataDir, "data", "", "keep uploaded objects in this folder instead of in memory")
	fs.StringVar(&c.examples, "examples", "web/examples", "serve the widget examples from this folder under /examples/ (\"\" = none)")
	fs.StringVar(&c.modules, "node-modules", "node_modules", "the npm folder holding the examples' widgets, served under /node_modules/")
	c.bucket = defaultBucket
	fs.StringVar(&c.realBucket, "bucket", "", "the backend ("+sessionPath+") starts its sessions in this real Cloud Storage bucket, with "+
		"Application Default Credentials, and signs URLs at "+signedPath+"; the bucket's CORS must allow the demo's origin. "+
		"Not tested here: no machine of the project reaches Google (\"\" = fake-gcs-server's bucket "+defaultBucket+")")
	allow := fs.String("allow-origin", "", "comma-separated origins whose pages the backend also serves (scheme://host:port), besides the demo's own")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	for _, o := range strings.Split(*allow, ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.allowOrigins = append(c.allowOrigins, o)
		}
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return c, nil
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	c, err := parseFlags(args, getenv, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "serve: %v\n", err)
		return 2
	}

	if _, err := os.Stat(filepath.Join(c.dist, "mediaupload.js")); err != nil {
		fmt.Fprintf(stderr, "serve: warning: %s not found: run ./build.sh first, or the page cannot load the module\n",
			filepath.Join(c.dist, "mediaupload.js"))
	}

	app, err := newApp(c)
	if err != nil {
		fmt.Fprintf(stderr, "serve: %v\n", err)
		return 1
	}
	defer app.Close()

	ln, err := netlink.Listen(c.addr)
	if err != nil {
		fmt.Fprintf(stderr, "serve: %s\n", listenError(c.addr, err))
		return 1
	}
	url := "http://" + ln.Addr().String() + "/"
	// Behind the network speed, a request's body reader can tell that its client has gone
	// (netlink.Listen).
	srv := &http.Server{Handler: app, ReadHeaderTimeout: 10 * time.Second, ConnContext: netlink.ConnContext}
	var tln net.Listener
	var cert *refserver.TestCertificate
	if c.tlsAddr != "" {
		if cert, err = refserver.NewTestCertificate(); err != nil {
			ln.Close()
			fmt.Fprintf(stderr, "serve: %v\n", err)
			return 1
		}
		if tln, err = netlink.Listen(c.tlsAddr); err != nil {
			ln.Close()
			fmt.Fprintf(stderr, "serve: %s\n", listenError(c.tlsAddr, err))
			return 1
		}
		// One server for both listeners: ServeTLS turns HTTP/2 on for the TLS one.
		srv.TLSConfig = cert.ServerConfig()
	}
	tlsURL := ""
	if tln != nil {
		tlsURL = "https://" + tln.Addr().String() + "/"
	}
	if err := app.listening(ctx, url, tlsURL); err != nil {
		ln.Close()
		if tln != nil {
			tln.Close()
		}
		fmt.Fprintf(stderr, "serve: backend: %v\n", err)
		return 1
	}
	if tln != nil {
		fmt.Fprintf(stdout, "mediaupload demo: %s %s\n", url, tlsURL)
		fmt.Fprintf(stdout, "  HTTPS with HTTP/2: a self-signed certificate made at start (the browser warns once; "+
			"chromium --ignore-certificate-errors-spki-list=%s trusts it)\n", cert.SPKI)
	} else {
		fmt.Fprintf(stdout, "mediaupload demo: %s\n", url)
	}
	fmt.Fprintf(stdout, "  reference server  %sref/upload/storage/v1/b/%s/o  (objects: %sref/_ref/objects)\n", url, c.bucket, url)
	fmt.Fprintf(stdout, "  fake-gcs-server   %supload/storage/v1/b/%s/o  (objects: %sstorage/v1/b/%s/o)\n", url, c.bucket, url, c.bucket)
	where := "fake-gcs-server's bucket " + c.bucket
	if c.realBucket != "" {
		where = "gs://" + c.realBucket + " with Application Default Credentials (signed URLs: " + url + signedPath[1:] + ")"
	}
	fmt.Fprintf(stdout, "  backend           %s%s  (POST: sessions in %s)\n", url, sessionPath[1:], where)
	if c.dataDir != "" {
		fmt.Fprintf(stdout, "  data kept in %s\n", c.dataDir)
	} else {
		fmt.Fprintf(stdout, "  data kept in memory (use -data DIR to keep it)\n")
	}
	fmt.Fprintf(stdout, "press Ctrl+C to stop\n")

	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	if tln != nil {
		go func() { errc <- srv.ServeTLS(tln, "", "") }()
	}
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "serve: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdownCtx)
	return 0
}

// listenError turns a failed Listen into one line a newcomer can act on.
func listenError(addr string, err error) string {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Sprintf("cannot listen on %s: the port is already in use (is another server still running?); "+
			"choose another address with -addr HOST:PORT or %s=HOST:PORT", addr, addrEnv)
	case errors.Is(err, syscall.EACCES):
		return fmt.Sprintf("cannot listen on %s: permission denied; choose a port above 1023 with -addr HOST:PORT or %s=HOST:PORT", addr, addrEnv)
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		err = opErr.Err
	}
	return fmt.Sprintf("cannot listen on %s: %v", addr, err)
}
