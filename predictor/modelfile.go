package predictor

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/augur-hpc/augur/predictor/forest"
)

// The model file: a magic string, a format version, three length-prefixed
// sections (JSON metadata, memory forest, runtime forest; an empty forest
// section means none) and a CRC-32 (Castagnoli) of all that precedes it.
//
//	"AUGURMDL" u32 version  u32 len meta  u32 len mem  u32 len runtime
//	meta  mem  runtime  u32 crc
const (
	modelMagic = "AUGURMDL"
	// ModelFormat is the model file format this build writes and the
	// newest it reads.
	ModelFormat = 1
	// maxModelMeta bounds the metadata section (it holds up to
	// MaxNeighbourModels memory curves).
	maxModelMeta = 16 << 20
)

// Errors of DecodeModel.
var (
	ErrModelCorrupt = errors.New("model file corrupt")
	ErrModelVersion = errors.New("model file format unsupported")
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// EncodeModel writes m in the model file format.
func EncodeModel(m *Model) ([]byte, error) {
	meta, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode model: %w", err)
	}
	var mem, rt []byte
	if m.Mem != nil {
		if mem, err = m.Mem.MarshalBinary(); err != nil {
			return nil, err
		}
	}
	if m.Runtime != nil {
		if rt, err = m.Runtime.MarshalBinary(); err != nil {
			return nil, err
		}
	}
	b := []byte(modelMagic)
	b = binary.LittleEndian.AppendUint32(b, ModelFormat)
	for _, s := range [][]byte{meta, mem, rt} {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	}
	b = append(b, meta...)
	b = append(b, mem...)
	b = append(b, rt...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable)), nil
}

// DecodeModel reads a model file. It rejects files of a newer format
// (ErrModelVersion), bad checksums, lengths and forests (ErrModelCorrupt),
// and models trained on another feature schema, and never panics.
func DecodeModel(data []byte) (*Model, error) {
	const head = len(modelMagic) + 4*4
	if len(data) < head+4 || string(data[:len(modelMagic)]) != modelMagic {
		return nil, fmt.Errorf("%w: not an augur model file", ErrModelCorrupt)
	}
	v := binary.LittleEndian.Uint32(data[len(modelMagic):])
	if v == 0 || v > ModelFormat {
		return nil, fmt.Errorf("%w: format %d, this build reads up to %d", ErrModelVersion, v, ModelFormat)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, crcTable) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrModelCorrupt)
	}
	var lens [3]uint64
	total := uint64(head)
	for i := range lens {
		lens[i] = uint64(binary.LittleEndian.Uint32(data[len(modelMagic)+4+4*i:]))
		total += lens[i]
	}
	if total != uint64(len(body)) || lens[0] > maxModelMeta {
		return nil, fmt.Errorf("%w: sections of %v bytes in %d", ErrModelCorrupt, lens, len(body)-head)
	}
	rest := body[head:]
	meta, mem, rt := rest[:lens[0]], rest[lens[0]:lens[0]+lens[1]], rest[lens[0]+lens[1]:]
	m := &Model{}
	if err := json.Unmarshal(meta, m); err != nil {
		return nil, fmt.Errorf("%w: metadata: %v", ErrModelCorrupt, err)
	}
	if m.Schema != FeatureSchema {
		return nil, fmt.Errorf("%w: feature schema %d, this build uses %d: retrain", ErrModelVersion, m.Schema, FeatureSchema)
	}
	m.nb = newNeighbours(m.Neighbours)
	for _, s := range []struct {
		b   []byte
		dst **forest.Forest
	}{{mem, &m.Mem}, {rt, &m.Runtime}} {
		if len(s.b) == 0 {
			continue
		}
		f := &forest.Forest{}
		if err := f.UnmarshalBinary(s.b); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrModelCorrupt, err)
		}
		if f.NFeatures != nFeatures {
			return nil, fmt.Errorf("%w: forest of %d features, want %d", ErrModelCorrupt, f.NFeatures, nFeatures)
		}
		*s.dst = f
	}
	return m, nil
}
