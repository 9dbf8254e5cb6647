package gcs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// File is what the page declares of the file it is about to upload: never its bytes.
type File struct {
	Name     string         // the file's name as the page gave it ("" for a Blob without one)
	Size     int64          // its length in bytes; UnknownSize for a stream
	Type     string         // its media type as declared ("" when none was)
	Metadata map[string]any // the upload's metadata as the page sent it (nil when none was)
}

// HandlerConfig is what a Handler is made of. Client, Origins and Authorize are required.
type HandlerConfig struct {
	Client *Client
	// Origins are the origins of the pages this backend starts uploads for
	// ("https://app.example.com"). A request with another Origin, or none, is refused before
	// anything else, and the Origin is never copied into an answer (docs/protocol.md
	// section 10).
	Origins []string
	// Authorize is the app's decision: who may upload what. It gets the page's request (its
	// cookies, its Authorization header) and the file it declares, and returns the bucket, the
	// object's name and metadata, or a refusal: Forbidden(message) (403), Unauthorized(message)
	// (401), or any *Error. Any other error answers a 500 that tells the page nothing of it
	// (OnError gets it). It runs after the size and type limits; the object it returns is
	// checked again (name, type, metadata) before any request to Cloud Storage.
	Authorize func(r *http.Request, f File) (Object, error)
	// MaxSize is the largest declared size taken, in bytes; 0 means Cloud Storage's own (5
	// TiB). With a limit, a page must declare the size.
	MaxSize int64
	// Types are the media types taken: "image/png", "image/*", "*/*". None: every type. The
	// page's declared type is checked before Authorize, the object's after it.
	Types []string
	// Signed answers a V4 signed URL for the XML API and its headers (Client.SignStart),
	// valid for SignedURLExpiry (default 15 minutes), instead of starting the session.
	Signed          bool
	SignedURLExpiry time.Duration
	// CrossOrigin makes the handler answer CORS for Origins, for pages served from another
	// origin than the handler's: preflights, and Access-Control-Allow-Origin (with
	// credentials, so that cookies can say who is asking) on every answer to those origins.
	// Off, it sends no CORS header: a page of another origin cannot read its answers, which is
	// the safe default where page and backend share an origin.
	CrossOrigin bool
	// OnError, if set, is told of every error answer, with its cause (for a log).
	OnError func(r *http.Request, err *Error)
}

// Handler is the page's way to ask for a session: POST with JSON {"name", "size", "type",
// "metadata"} (what the page declares), answered 200 {"sessionURL"} or, signed,
// {"signedURL", "headers", "expires"}; every refusal is a JSON {"error": {"code",
// "message"}} with a 4xx or 5xx status. The wire format is docs/protocol.md section 10's.
type Handler struct {
	cfg     HandlerConfig
	origins map[string]bool
	types   []string
}

// maxRequest bounds what the page may send: a file's name and its metadata.
const maxRequest = 64 << 10

// NewHandler checks cfg and makes the handler.
func NewHandler(cfg HandlerConfig) (*Handler, error) {
	if cfg.Client == nil || cfg.Authorize == nil {
		return nil, errors.New("gcs: a Handler needs a Client and an Authorize callback")
	}
	if len(cfg.Origins) == 0 {
		return nil, errors.New("gcs: a Handler needs the origins of its pages (HandlerConfig.Origins)")
	}
	if cfg.MaxSize < 0 || cfg.SignedURLExpiry < 0 || cfg.SignedURLExpiry > 7*24*time.Hour {
		return nil, errors.New("gcs: MaxSize must be 0 or more, SignedURLExpiry within seven days")
	}
	if cfg.Signed && cfg.Client.signer == nil {
		return nil, errors.New("gcs: signed mode against an emulator needs Options.GoogleAccessID and PrivateKey or SignBytes")
	}
	if cfg.SignedURLExpiry == 0 {
		cfg.SignedURLExpiry = 15 * time.Minute
	}
	h := &Handler{cfg: cfg, origins: map[string]bool{}}
	for _, o := range cfg.Origins {
		n, err := origin(o)
		if err != nil {
			return nil, err
		}
		h.origins[n] = true
	}
	for _, t := range cfg.Types {
		p, err := checkTypePattern(t)
		if err != nil {
			return nil, err
		}
		h.types = append(h.types, p)
	}
	return h, nil
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	answer, err := h.serve(w, r)
	if err != nil {
		if h.cfg.OnError != nil {
			h.cfg.OnError(r, err)
		}
		writeError(w, err)
		return
	}
	if answer != nil {
		writeJSON(w, http.StatusOK, answer)
	}
}

// serve gives the answer's body, or the refusal; nil, nil when it answered itself.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request) (any, *Error) {
	// docs/protocol.md section 10: the Origin is checked first, against the list; it is only
	// ever compared, never copied into an answer.
	origins := r.Header.Values("Origin")
	allowed := len(origins) == 1 && h.origins[origins[0]]
	if h.cfg.CrossOrigin {
		w.Header().Add("Vary", "Origin")
		if allowed {
			w.Header().Set("Access-Control-Allow-Origin", origins[0])
			w.Header().Set("Access-Control-Allow-Credentials", "true")
		}
	}
	if h.cfg.CrossOrigin && r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		if !allowed {
			return nil, refuse(http.StatusForbidden, CodeOriginNotAllowed, "this backend does not serve pages of this origin: add it to the handler's Origins")
		}
		w.Header().Set("Access-Control-Allow-Methods", "POST")
		if rh := r.Header.Get("Access-Control-Request-Headers"); rh != "" {
			w.Header().Set("Access-Control-Allow-Headers", rh)
		}
		w.Header().Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return nil, nil
	}
	if r.Method != http.MethodPost {
		return nil, refuse(http.StatusMethodNotAllowed, CodeBadRequest, "ask with POST and a JSON body {name, size, type, metadata}")
	}
	switch {
	case len(origins) == 0:
		return nil, checkOrigin("")
	case !allowed:
		return nil, refuse(http.StatusForbidden, CodeOriginNotAllowed, "this backend does not serve pages of this origin: add it to the handler's Origins")
	}
	f, e := readFile(r)
	if e != nil {
		return nil, e
	}
	if e := h.limits(f.Size, f.Type); e != nil {
		return nil, e
	}
	obj, err := h.cfg.Authorize(r, f)
	if err != nil {
		return nil, asError(err)
	}
	if obj.ContentType == "" {
		obj.ContentType = f.Type
	}
	if e := h.limits(f.Size, obj.ContentType); e != nil {
		return nil, e
	}
	if h.cfg.Signed {
		s, err := h.cfg.Client.SignStart(obj, time.Now().Add(h.cfg.SignedURLExpiry))
		if err != nil {
			return nil, asError(err)
		}
		return map[string]any{"signedURL": s.URL, "headers": s.Headers, "expires": s.Expires.UTC().Format(time.RFC3339)}, nil
	}
	uri, err := h.cfg.Client.StartSession(r.Context(), obj, f.Size, origins[0])
	if err != nil {
		return nil, asError(err)
	}
	return map[string]string{"sessionURL": uri}, nil
}

// limits applies MaxSize and Types to a declared size and a content type.
func (h *Handler) limits(size int64, typ string) *Error {
	if e := checkSize(size); e != nil {
		return e
	}
	if h.cfg.MaxSize > 0 && size == UnknownSize {
		return refuse(http.StatusLengthRequired, CodeBadRequest,
			fmt.Sprintf("this backend takes files of at most %d bytes, so it needs the size: send it", h.cfg.MaxSize))
	}
	if h.cfg.MaxSize > 0 && size > h.cfg.MaxSize {
		return refuse(http.StatusRequestEntityTooLarge, CodeTooLarge,
			fmt.Sprintf("the file is %d bytes, over this backend's limit of %d: choose a smaller file", size, h.cfg.MaxSize))
	}
	if typ != "" {
		if _, e := mediaType(typ); e != nil {
			return e
		}
	}
	if !typeAllowed(h.types, typ) {
		shown := typ
		if shown == "" {
			shown = "(none declared)"
		}
		return refuse(http.StatusUnsupportedMediaType, CodeTypeNotAllowed,
			fmt.Sprintf("files of type %s are not taken here: this backend takes %s", shown, strings.Join(h.types, ", ")))
	}
	return nil
}

// readFile reads the page's declaration: {"name": string, "size": integer or null, "type":
// string, "metadata": object or null}; other members are ignored.
func readFile(r *http.Request) (File, *Error) {
	bad := func(status int, why string) (File, *Error) {
		return File{}, refuse(status, CodeBadRequest, why)
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return bad(http.StatusUnsupportedMediaType, "send the file's declaration as JSON, with Content-Type: application/json")
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxRequest+1))
	if err != nil {
		return bad(http.StatusBadRequest, "the request's body could not be read: send it again")
	}
	if len(raw) > maxRequest {
		return bad(http.StatusRequestEntityTooLarge, fmt.Sprintf("the declaration is over %d KiB: send the name, size, type and metadata only", maxRequest>>10))
	}
	var body struct {
		Name     string          `json:"name"`
		Size     json.RawMessage `json:"size"`
		Type     string          `json:"type"`
		Metadata map[string]any  `json:"metadata"`
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	if err := d.Decode(&body); err != nil {
		return bad(http.StatusBadRequest, "the body is not the JSON {name, size, type, metadata} this backend takes: "+err.Error())
	}
	if d.More() {
		return bad(http.StatusBadRequest, "the body holds more than one JSON value: send one object")
	}
	f := File{Name: body.Name, Size: UnknownSize, Type: body.Type, Metadata: body.Metadata}
	if s := string(body.Size); s != "" && s != "null" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return bad(http.StatusBadRequest, fmt.Sprintf("size %s is not a whole number of bytes: send the file's size, or null when it is not known", s))
		}
		f.Size = n
	}
	return f, nil
}
