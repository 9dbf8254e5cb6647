package gcs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"cloud.google.com/go/auth/httptransport"
)

// Object is the app's decision for one upload: where it goes and what it is.
type Object struct {
	Bucket string
	Name   string
	// ContentType is the object's media type. In Handler's callback, "" means the type the
	// page declared; "" everywhere else means application/octet-stream.
	ContentType string
	// Metadata is the object's custom metadata (the object resource's "metadata"; in a signed
	// URL, x-goog-meta-KEY headers).
	Metadata map[string]string
}

// UnknownSize is the size of an upload whose length is not known when it starts (a stream).
const UnknownSize = -1

// StartSession starts a Cloud Storage resumable upload with the JSON API for obj, size bytes
// long (UnknownSize: not known yet), for a page of origin (its Origin header, exactly), and
// returns the session URI the page then PUTs the bytes to. The session answers every later
// request with the CORS headers of that origin (docs/protocol.md section 10). A bad argument
// fails before any request, and so does a name that breaks Cloud Storage's naming rules;
// every failure is an *Error.
func (c *Client) StartSession(ctx context.Context, obj Object, size int64, origin string) (string, error) {
	ct, e := checkObject(obj, size, origin, false)
	if e != nil {
		return "", e
	}
	// docs/protocol.md section 2: the object resource as the body, X-Upload-Content-* for the
	// bytes to come.
	resource := map[string]any{"name": obj.Name, "contentType": ct}
	if len(obj.Metadata) > 0 {
		resource["metadata"] = obj.Metadata
	}
	body, _ := json.Marshal(resource)
	u := *c.endpoint
	u.Path = "/upload/storage/v1/b/" + obj.Bucket + "/o"
	u.RawPath = "/upload/storage/v1/b/" + url.PathEscape(obj.Bucket) + "/o"
	u.RawQuery = "uploadType=resumable&name=" + url.QueryEscape(obj.Name)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return "", &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "the backend could not make its request to Cloud Storage", Err: err}
	}
	h := req.Header
	h.Set("Content-Type", "application/json; charset=UTF-8")
	h.Set("X-Upload-Content-Type", ct)
	if size != UnknownSize {
		h.Set("X-Upload-Content-Length", strconv.FormatInt(size, 10))
	}
	// The page's origin, exactly: Cloud Storage answers the session's requests with the CORS
	// headers of the origin it was started with (docs/protocol.md section 10).
	h.Set("Origin", origin)
	h.Set("User-Agent", "mediaupload-gcs")
	if c.creds != nil {
		tok, err := c.creds.Token(ctx)
		if err != nil {
			return "", &Error{Status: http.StatusInternalServerError, Code: CodeInternal,
				Message: "the backend could not get its credentials for Cloud Storage: try again later, or tell the site's owner", Err: err}
		}
		httptransport.SetAuthHeader(tok, req)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return "", &Error{Status: http.StatusServiceUnavailable, Code: CodeStorageUnavailable,
			Message: "Cloud Storage could not be reached to start the upload: try again shortly", Err: err}
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(res.Body, 4<<10))
	switch {
	case res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500:
		return "", &Error{Status: http.StatusServiceUnavailable, Code: CodeStorageUnavailable,
			Message: fmt.Sprintf("Cloud Storage answered %d to the upload's start: try again shortly", res.StatusCode),
			Err:     storageAnswer(res, answer)}
	case res.StatusCode != http.StatusOK && res.StatusCode != http.StatusCreated:
		// The cause (Google's message, which may name the backend's service account) stays
		// in Err, for the backend's log.
		return "", &Error{Status: http.StatusBadGateway, Code: CodeStorageError,
			Message: fmt.Sprintf("Cloud Storage refused to start the upload (HTTP %d): the site's backend or bucket needs fixing; its log has the cause", res.StatusCode),
			Err:     storageAnswer(res, answer)}
	}
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || (loc.Scheme != "https" && loc.Scheme != "http") || loc.Host == "" {
		return "", &Error{Status: http.StatusBadGateway, Code: CodeStorageError,
			Message: "Cloud Storage answered the upload's start without a session URI: tell the site's owner (the backend's log has the answer)",
			Err:     fmt.Errorf("%d with Location %q, not an absolute URL: %w", res.StatusCode, res.Header.Get("Location"), storageAnswer(res, answer))}
	}
	return loc.String(), nil
}

// checkObject checks what a session start or a signed URL is made of, before any request,
// and gives the content type to send.
func checkObject(obj Object, size int64, origin string, signed bool) (string, *Error) {
	if e := checkBucket(obj.Bucket); e != nil {
		return "", e
	}
	if e := checkName(obj.Name); e != nil {
		return "", e
	}
	if e := checkMetadata(obj.Metadata, signed); e != nil {
		return "", e
	}
	if e := checkSize(size); e != nil {
		return "", e
	}
	if !signed {
		if e := checkOrigin(origin); e != nil {
			return "", e
		}
	}
	if obj.ContentType == "" {
		return "application/octet-stream", nil
	}
	return mediaType(obj.ContentType)
}

func checkSize(size int64) *Error {
	switch {
	case size < UnknownSize:
		return refuse(http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("size %d is negative: send the file's size in bytes, or none when it is not known", size))
	case size > maxObjectSize:
		return refuse(http.StatusRequestEntityTooLarge, CodeTooLarge, fmt.Sprintf("the file is %d bytes, over Cloud Storage's largest object (5 TiB): it cannot be uploaded whole", size))
	}
	return nil
}

// checkOrigin: a session started without the page's origin answers its chunks without CORS
// headers, so every chunk would fail in the browser.
func checkOrigin(o string) *Error {
	if o == "" {
		return refuse(http.StatusForbidden, CodeOriginNotAllowed,
			"the request has no Origin header, which the session must be started with: ask from a web page (browsers send it with every POST)")
	}
	if n, err := origin(o); err != nil || n != o {
		return refuse(http.StatusForbidden, CodeOriginNotAllowed,
			"the Origin header is not a web page's origin (scheme://host[:port]): ask from a web page")
	}
	return nil
}

// storageAnswer is the cause of a bad answer: its status and Google's JSON error message,
// else the start of its body.
func storageAnswer(res *http.Response, body []byte) error {
	var g struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &g) == nil && g.Error.Message != "" {
		return fmt.Errorf("cloud storage answered %s: %s", res.Status, g.Error.Message)
	}
	if len(body) > 200 {
		body = body[:200]
	}
	return fmt.Errorf("cloud storage answered %s: %q", res.Status, body)
}
