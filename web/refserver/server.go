package refserver

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mediaupload/mediaupload/web/netlink"
)

// Range forms for the Range header of 308 answers (docs/protocol.md section 3
// shows both).
const (
	RangeBytes = "bytes=" // Range: bytes=0-N (the default)
	RangePlain = "plain"  // Range: 0-N
)

// chunkAlign is the unit every non-final chunk is a multiple of (docs/protocol.md
// section 3).
const chunkAlign = 262144

// Options configures a Server.
type Options struct {
	// SessionOrigin is the scheme://host[:port] put in front of session URIs,
	// so that tests can send the chunks to another origin. Empty: the
	// request's own origin.
	SessionOrigin string
	// RangeForm is RangeBytes (default, also when empty) or RangePlain.
	RangeForm string
	// Dir, when set, keeps completed objects in this folder, one data file
	// and one JSON file per object, and New loads the objects found there.
	// Sessions are kept in memory only.
	Dir string
}

// Server is the reference server. It is an http.Handler; its zero value is
// not usable, call New.
type Server struct {
	opts   Options
	faults *faultInjector
	proto  http.Handler
	mux    *http.ServeMux // control API
	link   netlink.Link   // the emulated uplink in front of everything but the control API

	mu       sync.Mutex
	origin   string // current session origin
	form     string // current range form
	expose   string // Access-Control-Expose-Headers, "" for the protocol's (Config.Expose)
	dropCut  bool   // what arrived of a cut chunk is dropped (Config.KeepCut false)
	sessions map[string]*session
	inflight map[string]int // chunks of each session whose bodies are being read
	objects  map[string]*storedObject
	log      []*LogEntry // entries in arrival order, filled in when answered
	seq      int64       // the last object generation
}

// New returns a Server. With Options.Dir it creates the folder if needed and
// loads the objects kept there; files it cannot read are skipped, and a
// failure to write an object later answers 500.
func New(opts Options) *Server {
	if opts.RangeForm != RangePlain {
		opts.RangeForm = RangeBytes
	}
	s := &Server{
		opts:     opts,
		origin:   opts.SessionOrigin,
		form:     opts.RangeForm,
		sessions: map[string]*session{},
		inflight: map[string]int{},
		objects:  map[string]*storedObject{},
	}
	s.proto = uploadHandler{s}
	s.faults = newFaultInjector(s.proto, s.forgetSession)
	s.mux = s.controlMux()
	s.loadDir()
	return s
}

// ServeHTTP answers CORS preflights, the control API under /_ref/, and
// uploads under /upload/ through the fault injector.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	expose := s.expose
	s.mu.Unlock()
	setCORS(w, r, expose) // docs/protocol.md section 6: on every answer, control routes included
	control := r.URL.Path == "/_ref" || strings.HasPrefix(r.URL.Path, "/_ref/")
	if control {
		s.serve(w, r, true)
		return
	}
	s.link.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, false) })).ServeHTTP(w, r)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, control bool) {
	if r.Method == http.MethodOptions {
		if !control {
			e := s.newEntry(r, kindPreflight)
			e.Status = http.StatusNoContent
			s.addEntry(e)
		}
		preflight(w, r)
		return
	}
	if control {
		s.mux.ServeHTTP(w, r)
		return
	}
	// The entry takes its place in the log on arrival, so that the log
	// keeps the order requests came in even when an answer is lost.
	kind := requestKind(r)
	ref := s.addEntry(s.newEntry(r, kind))
	lw := &logWriter{ResponseWriter: w}
	body := &countingBody{ReadCloser: r.Body}
	if kind == KindChunk && r.Body != nil {
		r.Body = body // LogEntry.Received
	}
	defer func() { ref.finish(lw.status, body.n) }()
	r = r.WithContext(withEntry(r.Context(), ref))
	if !strings.HasPrefix(r.URL.Path, "/upload/") && !xmlRequest(r) {
		writeError(lw, http.StatusNotFound, "not an upload path")
		return
	}
	if xmlRequest(r) {
		s.faults.ServeHTTP(&xmlWriter{lw}, r) // its errors are the XML API's (xmlapi.go)
		return
	}
	s.faults.ServeHTTP(lw, r)
}

// Objects returns the stored objects, sorted by name.
func (s *Server) Objects() []Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.objectList()
}

// Object returns the object called name and its bytes.
func (s *Server) Object(name string) (Object, []byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objects[name]
	if !ok {
		return Object{}, nil, false
	}
	data, err := s.objectData(o)
	if err != nil {
		return Object{}, nil, false
	}
	return o.Object, data, true
}

// DeleteObject forgets the object called name (deleting its files in Options.Dir) and the
// completed sessions that stored it, which hold its bytes too: a soak that deletes what it
// has checked keeps the server small. It reports whether there was such an object.
func (s *Server) DeleteObject(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objects[name]
	if !ok {
		return false
	}
	s.removeFiles(o)
	delete(s.objects, name)
	for id, sess := range s.sessions {
		if sess.done && sess.name == name {
			delete(s.sessions, id)
		}
	}
	return true
}

// SetFaults replaces the fault script. It returns an error, and leaves the
// script as it was, when a rule is not valid.
func (s *Server) SetFaults(f Faults) error { return s.faults.set(f) }

// ClearFaults removes every fault rule and the random mode.
func (s *Server) ClearFaults() { s.faults.clear() }

// CurrentFaults returns the fault script as set, with no counts applied.
func (s *Server) CurrentFaults() Faults { return s.faults.get() }

// Log returns the requests seen so far, oldest first.
func (s *Server) Log() []LogEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]LogEntry, len(s.log))
	for i, e := range s.log {
		out[i] = *e
	}
	return out
}

// ClearLog forgets the requests seen so far.
func (s *Server) ClearLog() {
	s.mu.Lock()
	s.log = nil
	s.mu.Unlock()
}

// SetSessionOrigin sets the origin put in front of session URIs from now on;
// "" means the request's own.
func (s *Server) SetSessionOrigin(origin string) {
	s.mu.Lock()
	s.origin = strings.TrimSuffix(origin, "/")
	s.mu.Unlock()
}

// SetRangeForm sets the form of the Range header of 308 answers: RangeBytes,
// RangePlain, or "" for the default.
func (s *Server) SetRangeForm(form string) error {
	if err := checkRangeForm(form); err != nil {
		return err
	}
	if form == "" {
		form = RangeBytes
	}
	s.mu.Lock()
	s.form = form
	s.mu.Unlock()
	return nil
}

// checkRangeForm reports a range form SetRangeForm does not take.
func checkRangeForm(form string) error {
	switch form {
	case "", RangeBytes, RangePlain:
		return nil
	}
	return errors.New("refserver: range form must be \"bytes=\" or \"plain\"")
}

// Reset forgets every object (deleting the files of Options.Dir), session,
// fault rule and log entry, and puts the configuration back to Options.
func (s *Server) Reset() {
	s.faults.clear()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.objects {
		s.removeFiles(o)
	}
	s.objects = map[string]*storedObject{}
	s.sessions = map[string]*session{}
	s.inflight = map[string]int{}
	s.log = nil
	s.origin = s.opts.SessionOrigin
	s.form = s.opts.RangeForm
	s.link.Set(0, 0)
	s.link.SetQueue(netlink.DefaultQueue)
	s.expose = ""
	s.dropCut = false
}

// forgetSession drops a session (the expire and gone faults).
func (s *Server) forgetSession(id string) {
	s.mu.Lock()
	delete(s.sessions, id)
	s.mu.Unlock()
}

func (s *Server) newEntry(r *http.Request, kind string) *LogEntry {
	return &LogEntry{
		Time:          time.Now(),
		Method:        r.Method,
		Path:          r.URL.Path,
		Query:         r.URL.RawQuery,
		ContentRange:  r.Header.Get("Content-Range"),
		ContentLength: r.ContentLength,
		ContentType:   r.Header.Get("Content-Type"),
		Authorization: r.Header.Get("Authorization"),
		Origin:        r.Header.Get("Origin"),
		GoogHash:      r.Header.Get("X-Goog-Hash"),
		Kind:          kind,
		Proto:         r.Proto,
	}
}

// addEntry appends e to the log; e is from now on written through the
// returned logRef only.
func (s *Server) addEntry(e *LogEntry) logRef {
	s.mu.Lock()
	s.log = append(s.log, e)
	s.mu.Unlock()
	return logRef{mu: &s.mu, e: e}
}
