package core

import (
	"math/rand/v2"
	"strconv"
)

// multipartBody builds the body of a multipart upload (docs/protocol.md section 1; RFC 2387):
// exactly two parts, the JSON metadata then the media. The media stays a separate piece
// between a prefix and a suffix, so a browser sends a Blob slice between two strings and the
// file's bytes are never copied. It returns the pieces and the request's Content-Type.
func multipartBody(metadata []byte, contentType string, media Piece) ([]Piece, string) {
	if len(metadata) == 0 {
		metadata = []byte("{}") // the first part is required even when empty
	}
	b := boundary()
	prefix := "--" + b + "\r\n" +
		"Content-Type: application/json; charset=UTF-8\r\n\r\n" +
		string(metadata) + "\r\n" +
		"--" + b + "\r\n" +
		"Content-Type: " + contentType + "\r\n\r\n"
	suffix := "\r\n--" + b + "--"
	return []Piece{Bytes(prefix), media, Bytes(suffix)}, "multipart/related; boundary=" + b
}

// boundary returns a fresh random boundary. 30 random hex digits make a collision with the
// media's bytes beyond any practical chance (RFC 2046 section 5.1.1 allows 70 characters).
func boundary() string {
	return "mediaupload_" + strconv.FormatUint(rand.Uint64()>>4, 16) + strconv.FormatUint(rand.Uint64()>>4, 16)
}
