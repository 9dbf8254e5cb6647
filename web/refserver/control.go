package refserver

import (
	"encoding/json"
	"io"
	"net/http"
	"time"
)

// Config is the body of GET and POST /_ref/config. In a POST, a nil field is
// left as it is and "" means the default.
type Config struct {
	SessionOrigin *string `json:"sessionOrigin,omitempty"`
	RangeForm     *string `json:"rangeForm,omitempty"`
	// Link emulates an uplink in front of the upload routes (package netlink): bodies read
	// at BitsPerSecond, answers one RTTMs late. Zeros: loopback as it is.
	Link *LinkConfig `json:"link,omitempty"`
	// Expose is the Access-Control-Expose-Headers of every answer, to play a server whose CORS
	// configuration is half done (say "Location" alone); "" means the protocol's headers.
	Expose *string `json:"expose,omitempty"`
}

// LinkConfig is Config.Link.
type LinkConfig struct {
	BitsPerSecond int64 `json:"bitsPerSecond"`
	RTTMs         int64 `json:"rttMs"`
}

// controlMux serves the control API; the routes and their JSON are
// listed in doc.go.
func (s *Server) controlMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_ref/objects", func(w http.ResponseWriter, r *http.Request) {
		objs := s.Objects()
		out := make([]map[string]any, len(objs))
		for i, o := range objs {
			out[i] = o.listing()
		}
		writeJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("GET /_ref/objects/{name...}", func(w http.ResponseWriter, r *http.Request) {
		o, data, ok := s.Object(r.PathValue("name"))
		if !ok {
			writeError(w, http.StatusNotFound, "no such object")
			return
		}
		w.Header().Set("Content-Type", o.ContentType)
		w.Header().Set("X-Goog-Hash", "crc32c="+o.CRC32C+",md5="+o.MD5Hash)
		w.Write(data)
	})
	mux.HandleFunc("DELETE /_ref/objects/{name...}", func(w http.ResponseWriter, r *http.Request) {
		if !s.DeleteObject(r.PathValue("name")) {
			writeError(w, http.StatusNotFound, "no such object")
			return
		}
		writeOK(w)
	})
	mux.HandleFunc("GET /_ref/faults", func(w http.ResponseWriter, r *http.Request) {
		f := s.CurrentFaults()
		if f.Rules == nil {
			f.Rules = []Rule{}
		}
		writeJSON(w, http.StatusOK, f)
	})
	mux.HandleFunc("POST /_ref/faults", func(w http.ResponseWriter, r *http.Request) {
		var f Faults
		if !readJSON(w, r, &f) {
			return
		}
		if err := s.SetFaults(f); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		writeOK(w)
	})
	mux.HandleFunc("DELETE /_ref/faults", func(w http.ResponseWriter, r *http.Request) {
		s.ClearFaults()
		writeOK(w)
	})
	mux.HandleFunc("GET /_ref/log", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Log())
	})
	mux.HandleFunc("DELETE /_ref/log", func(w http.ResponseWriter, r *http.Request) {
		s.ClearLog()
		writeOK(w)
	})
	mux.HandleFunc("GET /_ref/config", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.config())
	})
	mux.HandleFunc("POST /_ref/config", func(w http.ResponseWriter, r *http.Request) {
		var c Config
		if !readJSON(w, r, &c) {
			return
		}
		if c.RangeForm != nil {
			if err := s.SetRangeForm(*c.RangeForm); err != nil {
				writeError(w, http.StatusBadRequest, err.Error())
				return
			}
		}
		if c.SessionOrigin != nil {
			s.SetSessionOrigin(*c.SessionOrigin)
		}
		if c.Expose != nil {
			s.mu.Lock()
			s.expose = *c.Expose
			s.mu.Unlock()
		}
		if c.Link != nil {
			if c.Link.BitsPerSecond < 0 || c.Link.RTTMs < 0 {
				writeError(w, http.StatusBadRequest, "link: bitsPerSecond and rttMs must not be negative")
				return
			}
			s.link.Set(c.Link.BitsPerSecond/8, time.Duration(c.Link.RTTMs)*time.Millisecond)
		}
		writeJSON(w, http.StatusOK, s.config())
	})
	mux.HandleFunc("POST /_ref/reset", func(w http.ResponseWriter, r *http.Request) {
		s.Reset()
		writeOK(w)
	})
	mux.HandleFunc("/_ref/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such control route")
	})
	return mux
}

func (s *Server) config() Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	origin, form, expose := s.origin, s.form, s.expose
	rate, rtt := s.link.Get()
	return Config{SessionOrigin: &origin, RangeForm: &form, Link: &LinkConfig{BitsPerSecond: rate * 8, RTTMs: rtt.Milliseconds()}, Expose: &expose}
}

// readJSON decodes a control request body, answering 400 when it is not
// valid JSON.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return false
	}
	if err := json.Unmarshal(b, v); err != nil {
		writeError(w, http.StatusBadRequest, "bad json: "+err.Error())
		return false
	}
	return true
}

func writeOK(w http.ResponseWriter) { writeJSON(w, http.StatusOK, map[string]bool{"ok": true}) }
