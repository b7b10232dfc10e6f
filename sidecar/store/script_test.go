package store

import (
	"crypto/sha256"
	"strings"
	"testing"
)

// FuzzScriptRoundTrip: whatever the script, decoding its stored form gives it back.
func FuzzScriptRoundTrip(f *testing.F) {
	f.Add("")
	f.Add("#!/bin/bash\nsrun hostname\n")
	f.Add(strings.Repeat("srun python train.py\n", 400))
	f.Fuzz(func(t *testing.T, script string) {
		body, compression, err := encodeScript(script)
		if err != nil {
			t.Fatal(err)
		}
		if compression == compressionGzip && (len(script) <= compressOver || len(body) >= len(script)) {
			t.Errorf("%d-byte script gzipped to %d bytes; want gzip only over %d bytes and when smaller",
				len(script), len(body), compressOver)
		}
		sum := sha256.Sum256([]byte(script))
		got, err := decodeScript(body, compression, int64(len(script)), sum[:])
		if err != nil {
			t.Fatal(err)
		}
		if got != script {
			t.Errorf("round trip changed a %d-byte script", len(script))
		}
	})
}
