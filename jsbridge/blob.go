//go:build js && wasm

package jsbridge

import (
	"errors"
	"syscall/js"

	"github.com/mediaupload/mediaupload/core"
)

// BlobSource is a core.Source over a browser Blob (or File). Its pieces are Blob.slice
// results: slicing reads no bytes (PROTOCOL.md section 6), and fetch sends a slice as it is,
// so the file's bytes never enter Go's memory, unless a checksum was asked for: then core
// reads each chunk once, through BlobPiece.Read.
type BlobSource struct {
	blob js.Value
	size int64
}

// NewBlobSource returns the source of blob, or an error if blob is not a Blob.
func NewBlobSource(blob js.Value) (*BlobSource, error) {
	if !isBlob(blob) {
		return nil, errors.New("not a Blob or File")
	}
	// Through get: Object.create(Blob.prototype) passes instanceof, and its size getter
	// throws "Illegal invocation".
	size, err := get(blob, "size")
	if err != nil || size.Type() != js.TypeNumber {
		return nil, errors.New("not a Blob or File")
	}
	return &BlobSource{blob: blob, size: int64(size.Float())}, nil
}

func isBlob(v js.Value) bool {
	return v.Type() == js.TypeObject && v.InstanceOf(js.Global().Get("Blob"))
}

// Size returns blob.size.
func (s *BlobSource) Size() int64 { return s.size }

// Slice returns blob.slice(start, end) as a [BlobPiece], end clamped to the size.
func (s *BlobSource) Slice(start, end int64) (core.Piece, error) {
	end = min(end, s.size)
	if start < 0 || start > end {
		return nil, errors.New("jsbridge: slice out of range")
	}
	// slice(a, b) without a type: the piece's type is "", so fetch adds no Content-Type of
	// its own; core sets it (File.slice drops the type anyway, PROTOCOL.md section 6).
	var v js.Value
	if err := try(func() { v = s.blob.Call("slice", float64(start), float64(end)) }); err != nil {
		return nil, err
	}
	return BlobPiece{v: v, n: end - start}, nil
}

// BlobPiece is a run of the upload's bytes as a Blob, not yet read.
type BlobPiece struct {
	v js.Value
	n int64
}

// Len returns the piece's length in bytes.
func (p BlobPiece) Len() int64 { return p.n }

// Value returns the Blob.
func (p BlobPiece) Value() js.Value { return p.v }

// Read reads the piece's bytes into Go memory (Blob.arrayBuffer), for a checksum: core calls
// it once per chunk, and only when a checksum was asked for.
func (p BlobPiece) Read(ctx core.Context) ([]byte, error) {
	var promise js.Value
	if err := try(func() { promise = p.v.Call("arrayBuffer") }); err != nil {
		return nil, err
	}
	buf, err := Await(ctx, promise, nil)
	if err != nil {
		return nil, err
	}
	b := make([]byte, p.n)
	if n := js.CopyBytesToGo(b, js.Global().Get("Uint8Array").New(buf)); int64(n) != p.n {
		return nil, errors.New("jsbridge: the file changed while it was read")
	}
	return b, nil
}
