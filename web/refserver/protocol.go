package refserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Request kinds, the values of Rule.On and LogEntry.Kind.
const (
	KindStart     = "start"     // resumable session start (docs/protocol.md section 2)
	KindChunk     = "chunk"     // PUT with bytes to a session URI (section 3)
	KindQuery     = "query"     // status query, Content-Range: bytes */T (section 4)
	KindMedia     = "media"     // uploadType=media (section 1)
	KindMultipart = "multipart" // uploadType=multipart (section 1)
	KindAny       = "any"       // matches every kind (rules only)
	kindPreflight = "preflight"
	kindOther     = "other"
)

// requestKind classifies a request for the fault rules and the log.
func requestKind(r *http.Request) string {
	q := r.URL.Query()
	if q.Has("upload_id") {
		if r.Method == http.MethodPut && strings.HasPrefix(r.Header.Get("Content-Range"), "bytes */") {
			return KindQuery
		}
		return KindChunk
	}
	if xmlRequest(r) {
		return KindStart // the XML API's resumable start (xmlapi.go)
	}
	switch q.Get("uploadType") {
	case "resumable":
		return KindStart
	case "media":
		return KindMedia
	case "multipart":
		return KindMultipart
	}
	return kindOther
}

// session is one resumable upload session.
type session struct {
	id        string
	method    string // POST or PUT: the final answer is 201 or 200 (docs/protocol.md section 3)
	bucket    string
	name      string
	meta      json.RawMessage // the client's metadata, nil when none
	metaType  string          // the metadata's contentType, "" when none
	mediaType string          // X-Upload-Content-Type
	declared  int64           // X-Upload-Content-Length, -1 when absent
	total     int64           // the total stated so far, -1 when none
	data      []byte
	sum       *checksums // data's md5 and crc32c, kept as data grows
	done      bool
	object    Object
	xml       bool // started by the XML API (xmlapi.go): its final answer states no metadata
}

// uploadHandler is the protocol handler proper, behind the fault injector.
type uploadHandler struct{ s *Server }

func (h uploadHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Has("upload_id") {
		if r.Method != http.MethodPut { // docs/protocol.md sections 3-4: every session request is a PUT
			w.Header().Set("Allow", "PUT")
			writeError(w, http.StatusMethodNotAllowed, "session requests are PUT")
			return
		}
		h.sessionRequest(w, r, q.Get("upload_id"))
		return
	}
	if xmlRequest(r) {
		h.xmlStart(w, r) // xmlapi.go
		return
	}
	if r.Method != http.MethodPost && r.Method != http.MethodPut { // docs/protocol.md section 1
		w.Header().Set("Allow", "POST, PUT")
		writeError(w, http.StatusMethodNotAllowed, "uploads are POST or PUT")
		return
	}
	switch t := q.Get("uploadType"); t {
	case "resumable":
		h.start(w, r)
	case "media":
		h.media(w, r)
	case "multipart":
		h.multipart(w, r)
	case "":
		writeError(w, http.StatusBadRequest, "uploadType is required")
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("unknown uploadType %q", t))
	}
}

// start opens a resumable session (docs/protocol.md section 2).
func (h uploadHandler) start(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the connection is gone
	}
	// docs/protocol.md section 2: the body is empty or the JSON metadata only.
	var meta json.RawMessage
	var metaType, metaName string
	if len(body) > 0 {
		if !isJSONType(r.Header.Get("Content-Type")) {
			writeError(w, http.StatusBadRequest, "metadata must be sent as application/json")
			return
		}
		if metaType, metaName, err = parseMetadata(body); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		meta = body
	}
	// docs/protocol.md section 2: X-Upload-Content-Length is left out where the
	// length is not known.
	declared := int64(-1)
	if v := r.Header.Get("X-Upload-Content-Length"); v != "" {
		if declared, err = parseDecimal(v); err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("bad x-upload-content-length %q", v))
			return
		}
	}
	sess := &session{
		id:        newID(),
		method:    r.Method,
		bucket:    bucketOf(r.URL.Path),
		meta:      meta,
		metaType:  metaType,
		mediaType: r.Header.Get("X-Upload-Content-Type"),
		declared:  declared,
		total:     -1,
		sum:       newChecksums(),
	}
	sess.name = objectName(r, metaName)

	origin := h.s.addSession(sess, r)

	// docs/protocol.md section 2: 200 with an absolute Location carrying
	// upload_id; the original query is kept, as GCS does.
	q := r.URL.Query()
	q.Set("upload_id", sess.id)
	w.Header().Set("Location", origin+r.URL.EscapedPath()+"?"+q.Encode())
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
}

// addSession keeps a session just started, and returns the origin its URI goes under: the
// configured session origin, else r's own.
func (s *Server) addSession(sess *session, r *http.Request) (origin string) {
	s.mu.Lock()
	s.sessions[sess.id] = sess
	origin = s.origin
	s.mu.Unlock()
	if origin == "" {
		origin = requestOrigin(r)
	}
	return origin
}

// sessionRequest handles a PUT to a session URI: a chunk, the whole rest, or
// a status query (docs/protocol.md sections 3 and 4).
func (h uploadHandler) sessionRequest(w http.ResponseWriter, r *http.Request, id string) {
	var cr contentRange
	implicit := false
	if v := r.Header.Get("Content-Range"); v != "" {
		var err error
		if cr, err = parseContentRange(v); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
	} else {
		implicit = true // docs/protocol.md section 3: the whole rest from byte 0, no Content-Range
	}
	s := h.s
	// The body is hashed as it arrives (at the link's pace), going on from the session's
	// checksums as they stand now: when it turns out to be the next bytes, the last chunk of a
	// large object is answered without hashing the object after its last byte, as GCS does. (A
	// 125 MB object took this server a quarter-second to hash after the fact, which the links
	// bench counted against the client.)
	var ahead *checksums
	s.mu.Lock()
	if sess, ok := s.sessions[id]; ok && !sess.done && !cr.query && cr.first == int64(len(sess.data)) {
		ahead = sess.sum.clone()
	}
	s.mu.Unlock()
	size := r.ContentLength
	if size < 0 && !implicit && !cr.query {
		size = cr.last - cr.first + 1 // a body of unknown length (a stream) says its size in Content-Range
	}
	if cr.query {
		h.settle(id)
	} else {
		s.mu.Lock()
		s.inflight[id]++
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			if s.inflight[id] > 0 { // (a reset meanwhile has cleared it)
				s.inflight[id]--
			}
			s.mu.Unlock()
		}()
	}
	body, err := readBody(r.Body, size, ahead)
	if err != nil {
		if !implicit && !cr.query {
			h.keepCut(r, id, cr, body, ahead)
		}
		return // the connection is gone
	}
	if implicit {
		cr = contentRange{first: 0, last: int64(len(body)) - 1, total: int64(len(body))}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[id]
	if !ok {
		// docs/protocol.md section 5: 404 on a session URI, the session expired.
		writeError(w, http.StatusNotFound, "no such upload session")
		return
	}
	if cr.query {
		h.query(w, r, sess, cr, body)
		return
	}
	h.chunk(w, r, sess, cr, body, ahead)
}

// settle lets a status query wait, a moment at most, for the chunks of session id whose bodies
// are still being read: a client that gave a chunk up asks at once what the session holds, and
// what arrived of that chunk is kept (keepCut) once its handler sees it was cut, which can come
// a little after the query. The session's requests are then answered in the order they came.
func (h uploadHandler) settle(id string) {
	s := h.s
	for range 100 {
		s.mu.Lock()
		n := s.inflight[id]
		s.mu.Unlock()
		if n <= 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// maxPrealloc bounds the room made ahead for a body or a session's data from a length the
// client stated.
const maxPrealloc = 256 << 20

// readBody reads a body whole, into room for the size stated (-1: none), writing it to sum as
// well when sum is not nil. The room is made at once because growing it as the bytes come
// copies all read so far each time, and the handler reading nothing meanwhile held up a fast
// link for a tenth of a second at a time (the links bench counted that against the client).
func readBody(body io.Reader, size int64, sum *checksums) ([]byte, error) {
	src := body
	if sum != nil {
		src = io.TeeReader(body, sum)
	}
	b := make([]byte, 0, 512)
	if size > 0 && size < maxPrealloc {
		b = make([]byte, 0, size+1) // +1: room to read the end without growing
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := src.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// checkTotal reports a stated total that conflicts with an earlier one, with
// X-Upload-Content-Length, or with the bytes already stored (docs/protocol.md
// sections 2-3).
func (sess *session) checkTotal(total int64) error {
	if total < 0 {
		return nil
	}
	if sess.total >= 0 && total != sess.total {
		return fmt.Errorf("total %d conflicts with the total %d stated before", total, sess.total)
	}
	if sess.declared >= 0 && total != sess.declared {
		return fmt.Errorf("total %d conflicts with x-upload-content-length %d", total, sess.declared)
	}
	if total < int64(len(sess.data)) {
		return fmt.Errorf("total %d is less than the %d bytes stored", total, len(sess.data))
	}
	return nil
}

// chunk stores the bytes of a chunk (docs/protocol.md section 3), under s.mu.
// ahead, when not nil, holds the checksums of the stored bytes and then all of body, made as
// body arrived while cr.first was where the stored bytes ended.
func (h uploadHandler) chunk(w http.ResponseWriter, r *http.Request, sess *session, cr contentRange, body []byte, ahead *checksums) {
	if err := checkLength(r, cr); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if n := cr.last - cr.first + 1; int64(len(body)) != n {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("body of %d bytes disagrees with content-range (%d bytes)", len(body), n))
		return
	}
	if h.answered(w, sess, cr.total) {
		return
	}
	final, err := sess.checkPlace(cr)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	// The keep fault: the server holds fewer bytes than were sent
	// (docs/protocol.md section 3).
	if keep, ok := keepFrom(r.Context()); ok && keep < int64(len(body)) {
		body = body[:keep]
		final = false
		ahead = nil // it counted the bytes dropped
	}
	fresh, sum := sess.fresh(cr.first, body, ahead)
	if final {
		if !h.complete(w, r, sess, fresh, cr.total, sum) {
			return
		}
		entryFrom(r.Context()).addKept(len(fresh))
		h.final(w, sess)
		return
	}
	sess.add(fresh, sum, cr.total)
	entryFrom(r.Context()).addKept(len(fresh))
	h.incomplete(w, r, int64(len(sess.data)))
}

// checkLength reports a Content-Length that disagrees with the Content-Range: docs/protocol.md
// section 3, Content-Length = bytes in this request.
func checkLength(r *http.Request, cr contentRange) error {
	if n := cr.last - cr.first + 1; r.ContentLength >= 0 && r.ContentLength != n {
		return fmt.Errorf("content-length %d disagrees with content-range (%d bytes)", r.ContentLength, n)
	}
	return nil
}

// checkPlace reports a chunk of the wrong length or in the wrong place, and says whether it is
// the last one (docs/protocol.md section 3), under s.mu.
func (sess *session) checkPlace(cr contentRange) (final bool, err error) {
	n := cr.last - cr.first + 1
	// The chunk is the last one when it states the total and reaches it.
	// X-Upload-Content-Length alone does not make a chunk final: the last
	// request states the total (docs/protocol.md section 3).
	final = cr.total >= 0 && cr.last+1 == cr.total
	// docs/protocol.md section 3: every chunk but the last is a multiple of 256 KiB.
	if !final && n%chunkAlign != 0 {
		return final, fmt.Errorf("non-final chunk of %d bytes is not a multiple of %d", n, chunkAlign)
	}
	// docs/protocol.md section 3: the next chunk starts at N+1, where the stored
	// bytes end; a gap is an error.
	if stored := int64(len(sess.data)); cr.first > stored {
		return final, fmt.Errorf("chunk starts at %d, past the %d bytes stored", cr.first, stored)
	}
	return final, nil
}

// fresh returns the bytes of body, which starts at first, that the session does not hold yet,
// and the checksums of the stored bytes and those (ahead's, when it holds them), under s.mu.
func (sess *session) fresh(first int64, body []byte, ahead *checksums) ([]byte, *checksums) {
	stored := int64(len(sess.data))
	// Bytes before the stored offset were stored already: skip them, compare
	// nothing (docs/protocol.md section 3, re-sent ranges are stored once).
	var fresh []byte
	if end := first + int64(len(body)); end > stored {
		fresh = body[stored-first:]
	}
	sum := ahead
	if sum == nil || first != stored {
		sum = sess.sum.clone()
		sum.Write(fresh)
	}
	return fresh, sum
}

// add appends fresh to the stored bytes, with sum their checksums and total the total stated
// (-1: none), under s.mu.
func (sess *session) add(fresh []byte, sum *checksums, total int64) {
	if sess.data == nil && sess.declared > 0 && sess.declared < maxPrealloc { // room at once, as in readBody
		sess.data = make([]byte, 0, sess.declared)
	}
	sess.data = append(sess.data, fresh...)
	sess.sum = sum
	if total >= 0 {
		sess.total = total
	}
}

// answered answers a request to sess that states a total conflicting with the session's
// (400), or that comes after the upload completed: a chunk re-sent after a lost final answer,
// or a status query, both told 200/201 with the metadata again (docs/protocol.md section 4). It
// reports whether it answered.
func (h uploadHandler) answered(w http.ResponseWriter, sess *session, total int64) bool {
	if err := sess.checkTotal(total); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return true
	}
	if sess.done {
		h.final(w, sess)
		return true
	}
	return false
}

// query answers a status query (docs/protocol.md section 4), under s.mu.
func (h uploadHandler) query(w http.ResponseWriter, r *http.Request, sess *session, cr contentRange, body []byte) {
	// docs/protocol.md section 4: empty body, Content-Length: 0.
	if r.ContentLength > 0 || len(body) > 0 {
		writeError(w, http.StatusBadRequest, "a status query has an empty body")
		return
	}
	if h.answered(w, sess, cr.total) {
		return
	}
	stored := int64(len(sess.data))
	if cr.total >= 0 && cr.total == stored {
		// bytes */T with every byte stored: the empty final request of an
		// upload of unknown length (docs/protocol.md section 3).
		if !h.complete(w, r, sess, nil, cr.total, sess.sum) {
			return
		}
		h.final(w, sess)
		return
	}
	if cr.total >= 0 {
		sess.total = cr.total
	}
	h.incomplete(w, r, stored)
}

// complete appends the last bytes, checks the hashes the client stated (X-Goog-Hash, the
// session's metadata) and stores the object,
// under s.mu; sum holds the checksums of the stored bytes and fresh. On a failure it answers,
// leaves the session as it was and returns false.
func (h uploadHandler) complete(w http.ResponseWriter, r *http.Request, sess *session, fresh []byte, total int64, sum *checksums) bool {
	if err := checkHashes(r.Header.Values("X-Goog-Hash"), sess.meta, sum); err != nil {
		writeGoogleError(w, http.StatusBadRequest, err.Error(), badDigest)
		return false
	}
	data := fresh // the object is this request's body alone: no copy
	if len(sess.data) > 0 {
		data = append(sess.data, fresh...)
	}
	o := h.newObject(sess.bucket, sess.name, sess.meta, contentTypeOf(sess.metaType, sess.mediaType), sum, total)
	if err := h.s.putObject(o, data); err != nil {
		writeError(w, http.StatusInternalServerError, "cannot store the object: "+err.Error())
		return false
	}
	sess.data = data
	sess.sum = sum
	sess.total = total
	sess.done = true
	sess.object = o
	return true
}

// final answers a completed session: 201 when it was started with POST, 200
// with PUT, body the object JSON (docs/protocol.md section 3); the XML API's, 200 with no body
// (xmlapi.go).
func (h uploadHandler) final(w http.ResponseWriter, sess *session) {
	if sess.xml {
		xmlFinal(w, sess.object)
		return
	}
	status := http.StatusOK
	if sess.method == http.MethodPost {
		status = http.StatusCreated
	}
	writeJSON(w, status, sess.object.Resource())
}

// incomplete answers 308 Resume Incomplete with the stored range, or no Range
// at all when nothing is stored (docs/protocol.md section 3); with
// X-GUploader-No-308: yes, 200 plus X-HTTP-Status-Code-Override: 308
// instead.
func (h uploadHandler) incomplete(w http.ResponseWriter, r *http.Request, stored int64) {
	if stored > 0 {
		prefix := "bytes="
		if h.s.form == RangePlain {
			prefix = ""
		}
		w.Header().Set("Range", prefix+"0-"+strconv.FormatInt(stored-1, 10))
	}
	w.Header().Set("Content-Length", "0")
	if strings.EqualFold(r.Header.Get("X-GUploader-No-308"), "yes") {
		w.Header().Set("X-HTTP-Status-Code-Override", "308")
		w.WriteHeader(http.StatusOK)
		return
	}
	w.WriteHeader(http.StatusPermanentRedirect)
}

// media stores the body as the object (docs/protocol.md section 1).
func (h uploadHandler) media(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r.Body, r.ContentLength, nil)
	if err != nil {
		return
	}
	h.store(w, r, "", nil, r.Header.Get("Content-Type"), body)
}

// multipart stores a multipart/related upload: exactly two parts, metadata
// JSON then media, closed by --B-- (docs/protocol.md section 1, RFC 2387).
func (h uploadHandler) multipart(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r.Body, r.ContentLength, nil)
	if err != nil {
		return
	}
	meta, metaType, mediaType, media, err := parseMultipart(r.Header.Get("Content-Type"), body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	h.store(w, r, metaType, meta, mediaType, media)
}

// store checks the hashes the client stated (X-Goog-Hash, a multipart upload's metadata) and
// stores the object of a media or multipart
// upload, answering 200 with its JSON (docs/protocol.md section 1).
func (h uploadHandler) store(w http.ResponseWriter, r *http.Request, metaType string, meta json.RawMessage, mediaType string, data []byte) {
	var metaName string
	if meta != nil {
		_, metaName, _ = parseMetadata(meta)
	}
	sum := newChecksums()
	sum.Write(data)
	if err := checkHashes(r.Header.Values("X-Goog-Hash"), meta, sum); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	h.s.mu.Lock()
	o := h.newObject(bucketOf(r.URL.Path), objectName(r, metaName), meta, contentTypeOf(metaType, mediaType), sum, int64(len(data)))
	err := h.s.putObject(o, data)
	h.s.mu.Unlock()
	if err != nil {
		writeError(w, http.StatusInternalServerError, "cannot store the object: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, o.Resource())
}

// newObject describes a completed object, under s.mu.
func (h uploadHandler) newObject(bucket, name string, meta json.RawMessage, contentType string, sum *checksums, size int64) Object {
	h.s.seq++
	gen := h.s.seq
	return Object{
		Name:         name,
		Bucket:       bucket,
		Size:         size,
		MD5Hash:      sum.MD5(),
		CRC32C:       sum.CRC32C(),
		ContentType:  contentType,
		Generation:   gen,
		Created:      time.Now(),
		MetadataJSON: meta,
	}
}

// parseMultipart splits a multipart/related body into its two parts
// (docs/protocol.md section 1).
func parseMultipart(contentType string, body []byte) (meta json.RawMessage, metaType, mediaType string, media []byte, err error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/related" {
		return nil, "", "", nil, fmt.Errorf("content-type %q is not multipart/related", contentType)
	}
	boundary := params["boundary"]
	if boundary == "" {
		return nil, "", "", nil, errors.New("multipart/related without a boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	p, err := mr.NextPart()
	if err != nil {
		return nil, "", "", nil, fmt.Errorf("malformed multipart body: %v", err)
	}
	if !isJSONType(p.Header.Get("Content-Type")) {
		return nil, "", "", nil, errors.New("the first part (metadata) is not application/json")
	}
	if meta, err = io.ReadAll(p); err != nil {
		return nil, "", "", nil, fmt.Errorf("malformed multipart body: %v", err)
	}
	if metaType, _, err = parseMetadata(meta); err != nil {
		return nil, "", "", nil, err
	}
	if p, err = mr.NextPart(); err != nil {
		return nil, "", "", nil, fmt.Errorf("multipart body without a media part: %v", err)
	}
	if mediaType = p.Header.Get("Content-Type"); mediaType == "" {
		return nil, "", "", nil, errors.New("the media part has no content-type")
	}
	if media, err = io.ReadAll(p); err != nil {
		return nil, "", "", nil, fmt.Errorf("malformed multipart body: %v", err)
	}
	// Exactly two parts, then the closing --B--.
	if _, err = mr.NextPart(); err != io.EOF {
		if err == nil {
			return nil, "", "", nil, errors.New("multipart body with more than two parts")
		}
		return nil, "", "", nil, fmt.Errorf("malformed multipart body: %v", err)
	}
	return meta, metaType, mediaType, media, nil
}

// parseMetadata checks that b is a JSON object and returns its contentType
// and name, when they are strings.
func parseMetadata(b []byte) (contentType, name string, err error) {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return "", "", errors.New("metadata is not a JSON object")
	}
	contentType, _ = m["contentType"].(string)
	name, _ = m["name"].(string)
	return contentType, name, nil
}

func isJSONType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

func contentTypeOf(metaType, mediaType string) string {
	if metaType != "" {
		return metaType
	}
	if mediaType != "" {
		return mediaType
	}
	return "application/octet-stream"
}

// objectName is the query's name, else the metadata's, else a generated one.
func objectName(r *http.Request, metaName string) string {
	if n := r.URL.Query().Get("name"); n != "" {
		return n
	}
	if metaName != "" {
		return metaName
	}
	return "object-" + newID()[:12]
}

// bucketOf returns the segment after /b/ in a GCS-shaped path, else "bucket".
func bucketOf(path string) string {
	segs := strings.Split(path, "/")
	for i := 0; i+1 < len(segs); i++ {
		if segs[i] == "b" && segs[i+1] != "" {
			return segs[i+1]
		}
	}
	return "bucket"
}

func requestOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"cannot encode the answer"}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// writeError answers status with {"error":{"code":status,"message":msg}},
// shaped like Google's JSON errors.
// writeError answers with Google's JSON error: {"error": {"code", "message", "errors":
// [{"domain", "reason", "message"}]}}, the reason the one Google's APIs give for the status.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeGoogleError(w, status, msg, "")
}

// writeGoogleError is writeError with a reason of the caller's ("" for the status's own). The
// answer to a request of the XML API is its XML error instead (xmlapi.go).
func writeGoogleError(w http.ResponseWriter, status int, msg, reason string) {
	if _, ok := w.(*xmlWriter); ok {
		writeXMLError(w, status, xmlCode(status, reason), msg)
		return
	}
	if reason == "" || reason == badDigest {
		reason = reasonOf(status) // the JSON API's reason for a hash that does not match is "invalid"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{
		"code":    status,
		"message": msg,
		"errors":  []map[string]any{{"domain": "global", "reason": reason, "message": msg}},
	}})
}

// reasonOf returns the reason Google's APIs give a status in their JSON errors.
func reasonOf(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid"
	case http.StatusUnauthorized:
		return "authError"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusNotFound:
		return "notFound"
	case http.StatusConflict:
		return "conflict"
	case http.StatusGone:
		return "gone"
	case http.StatusPreconditionFailed:
		return "conditionNotMet"
	case http.StatusTooManyRequests:
		return "rateLimitExceeded"
	}
	if status >= 500 {
		return "backendError"
	}
	return "error"
}

type keepKey struct{}

// withKeep asks the protocol handler to store only the first keep bytes of a
// chunk (the keep fault).
func withKeep(ctx context.Context, keep int64) context.Context {
	return context.WithValue(ctx, keepKey{}, keep)
}

func keepFrom(ctx context.Context) (int64, bool) {
	k, ok := ctx.Value(keepKey{}).(int64)
	return k, ok
}
