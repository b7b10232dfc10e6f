package store

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
)

// compressOver is the script size above which the body is stored gzipped.
const compressOver = 4 << 10

const (
	compressionNone = "none"
	compressionGzip = "gzip"
)

// encodeScript returns the stored form of a script: gzipped when it is over
// compressOver bytes and gzip makes it smaller, as is otherwise.
func encodeScript(script string) (body []byte, compression string, err error) {
	if len(script) <= compressOver {
		return []byte(script), compressionNone, nil
	}
	var buf bytes.Buffer
	buf.Grow(len(script) / 3)
	zw := gzip.NewWriter(&buf)
	if _, err := io.WriteString(zw, script); err != nil {
		return nil, "", fmt.Errorf("gzip script: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, "", fmt.Errorf("gzip script: %w", err)
	}
	if buf.Len() >= len(script) {
		return []byte(script), compressionNone, nil
	}
	return buf.Bytes(), compressionGzip, nil
}

// decodeScript reverses encodeScript and checks the result against the
// size and hash it was stored under.
func decodeScript(body []byte, compression string, size int64, sum []byte) (string, error) {
	var script []byte
	switch compression {
	case compressionNone:
		script = body
	case compressionGzip:
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return "", fmt.Errorf("gunzip script: %w", err)
		}
		script = make([]byte, 0, size)
		buf := bytes.NewBuffer(script)
		if _, err := io.Copy(buf, io.LimitReader(zr, size+1)); err != nil {
			return "", fmt.Errorf("gunzip script: %w", err)
		}
		script = buf.Bytes()
	default:
		return "", fmt.Errorf("script compression %q unknown", compression)
	}
	if int64(len(script)) != size {
		return "", fmt.Errorf("script is %d bytes, stored as %d", len(script), size)
	}
	if got := sha256.Sum256(script); !bytes.Equal(got[:], sum) {
		return "", fmt.Errorf("script sha256 %x does not match its key %x", got, sum)
	}
	return string(script), nil
}
