package config

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-viper/mapstructure/v2"
)

// ByteSize is a size in bytes, written in the file as a plain number of bytes
// or with a suffix: K/M/G/T (powers of 1024, as Slurm reads them), KiB/MiB/GiB/TiB
// (the same), or KB/MB/GB/TB (powers of 1000).
type ByteSize int64

// ParseByteSize reads "80GiB", "16G", "512M", "1.5TB" or "1048576".
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty size")
	}
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') && t[i-1] != '.' {
		i--
	}
	num, unit := strings.TrimSpace(t[:i]), strings.ToLower(strings.TrimSpace(t[i:]))
	mult := float64(1)
	switch unit {
	case "", "b":
	case "k", "kib":
		mult = 1 << 10
	case "m", "mib":
		mult = 1 << 20
	case "g", "gib":
		mult = 1 << 30
	case "t", "tib":
		mult = 1 << 40
	case "kb":
		mult = 1e3
	case "mb":
		mult = 1e6
	case "gb":
		mult = 1e9
	case "tb":
		mult = 1e12
	default:
		return 0, fmt.Errorf("size %q: unknown unit %q (use B, K, M, G, T, KiB..TiB or KB..TB)", s, t[i:])
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || f < 0 {
		return 0, fmt.Errorf("size %q: want a non-negative number with an optional unit such as 16GiB", s)
	}
	b := f * mult
	if b > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return ByteSize(math.Round(b)), nil
}

// String prints the size with the largest binary unit that keeps it readable.
func (b ByteSize) String() string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f := float64(b)
	u := 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	if f == math.Trunc(f) {
		return fmt.Sprintf("%.0f%s", f, units[u])
	}
	return fmt.Sprintf("%.1f%s", f, units[u])
}

// MiB returns the size in mebibytes.
func (b ByteSize) MiB() float64 { return float64(b) / (1 << 20) }

// FileMode is a permission mask written in octal ("0660").
type FileMode uint32

var (
	byteSizeType = reflect.TypeOf(ByteSize(0))
	fileModeType = reflect.TypeOf(FileMode(0))
)

func byteSizeHook(from, to reflect.Type, data any) (any, error) {
	if to != byteSizeType {
		return data, nil
	}
	switch v := data.(type) {
	case string:
		return ParseByteSize(v)
	case int:
		if v < 0 {
			return nil, fmt.Errorf("size %d is negative", v)
		}
		return ByteSize(v), nil
	case int64:
		if v < 0 {
			return nil, fmt.Errorf("size %d is negative", v)
		}
		return ByteSize(v), nil
	case float64:
		if v < 0 || math.IsNaN(v) || v > math.MaxInt64/2 {
			return nil, fmt.Errorf("size %v is out of range", v)
		}
		return ByteSize(v), nil
	}
	return data, nil
}

func fileModeHook(from, to reflect.Type, data any) (any, error) {
	if to != fileModeType {
		return data, nil
	}
	s := fmt.Sprint(data)
	n, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		return nil, fmt.Errorf("mode %q: want octal permission bits such as \"0660\" (quote it in YAML)", s)
	}
	return FileMode(n), nil
}

var _ mapstructure.DecodeHookFuncType = byteSizeHook
