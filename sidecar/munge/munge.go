// Package munge signs and verifies messages with MUNGE, the credential
// service every Slurm cluster already runs, through libmunge (cgo). Compute
// nodes sign their job outcomes; augurd accepts only what verifies, and MUNGE
// itself refuses a credential decoded twice (a replay) or past its TTL.
//
//	augur-node: payload ─Encode─> credential string ─TCP─> augurd: Decode ─> payload, uid, gid
//	                                 (munged signs)                   (munged verifies, refuses replays)
package munge

/*
#cgo LDFLAGS: -lmunge
#include <stdlib.h>
#include <munge.h>

static munge_err_t augur_ctx_socket(munge_ctx_t ctx, const char *path) {
	return munge_ctx_set(ctx, MUNGE_OPT_SOCKET, path);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// Errors a caller tells apart.
var (
	// ErrReplayed: the credential was already decoded once.
	ErrReplayed = errors.New("munge: credential replayed")
	// ErrInvalid: not a credential of this realm (forged, corrupt, wrong key, expired).
	ErrInvalid = errors.New("munge: credential invalid")
	// ErrUnavailable: munged cannot be reached.
	ErrUnavailable = errors.New("munge: munged unavailable")
)

// Client talks to munged.
type Client struct {
	// Socket is munged's socket; "" means libmunge's default.
	Socket string
}

// MaxPayload bounds what Encode signs and Decode returns.
const MaxPayload = 1 << 20

func (c Client) ctx() (C.munge_ctx_t, error) {
	ctx := C.munge_ctx_create()
	if ctx == nil {
		return nil, fmt.Errorf("munge: cannot create a context (out of memory)")
	}
	if c.Socket != "" {
		p := C.CString(c.Socket)
		defer C.free(unsafe.Pointer(p))
		if e := C.augur_ctx_socket(ctx, p); e != C.EMUNGE_SUCCESS {
			C.munge_ctx_destroy(ctx)
			return nil, fmt.Errorf("munge: socket %s: %s", c.Socket, C.GoString(C.munge_strerror(e)))
		}
	}
	return ctx, nil
}

func errFor(ctx C.munge_ctx_t, e C.munge_err_t) error {
	msg := C.GoString(C.munge_ctx_strerror(ctx))
	if msg == "" {
		msg = C.GoString(C.munge_strerror(e))
	}
	switch e {
	case C.EMUNGE_CRED_REPLAYED:
		return fmt.Errorf("%w: %s", ErrReplayed, msg)
	case C.EMUNGE_SOCKET, C.EMUNGE_TIMEOUT:
		return fmt.Errorf("%w: %s", ErrUnavailable, msg)
	case C.EMUNGE_BAD_CRED, C.EMUNGE_BAD_VERSION, C.EMUNGE_BAD_CIPHER, C.EMUNGE_BAD_MAC,
		C.EMUNGE_BAD_ZIP, C.EMUNGE_BAD_REALM, C.EMUNGE_CRED_INVALID, C.EMUNGE_CRED_EXPIRED,
		C.EMUNGE_CRED_REWOUND, C.EMUNGE_CRED_UNAUTHORIZED, C.EMUNGE_BAD_LENGTH:
		return fmt.Errorf("%w: %s", ErrInvalid, msg)
	}
	return fmt.Errorf("munge: %s", msg)
}

// Encode signs payload and returns the credential.
func (c Client) Encode(payload []byte) (string, error) {
	if len(payload) > MaxPayload {
		return "", fmt.Errorf("munge: payload of %d bytes over %d", len(payload), MaxPayload)
	}
	ctx, err := c.ctx()
	if err != nil {
		return "", err
	}
	defer C.munge_ctx_destroy(ctx)
	var cred *C.char
	var p unsafe.Pointer
	if len(payload) > 0 {
		p = C.CBytes(payload)
		defer C.free(p)
	}
	if e := C.munge_encode(&cred, ctx, p, C.int(len(payload))); e != C.EMUNGE_SUCCESS {
		return "", errFor(ctx, e)
	}
	defer C.free(unsafe.Pointer(cred))
	return C.GoString(cred), nil
}

// Identity is who signed a credential.
type Identity struct {
	UID, GID uint32
}

// Decode verifies cred and returns its payload and signer. A credential is
// accepted once: MUNGE answers ErrReplayed the second time.
func (c Client) Decode(cred string) ([]byte, Identity, error) {
	if len(cred) == 0 || len(cred) > 2*MaxPayload {
		return nil, Identity{}, fmt.Errorf("%w: %d bytes", ErrInvalid, len(cred))
	}
	ctx, err := c.ctx()
	if err != nil {
		return nil, Identity{}, err
	}
	defer C.munge_ctx_destroy(ctx)
	cs := C.CString(cred)
	defer C.free(unsafe.Pointer(cs))
	var p unsafe.Pointer
	var n C.int
	var uid C.uid_t
	var gid C.gid_t
	e := C.munge_decode(cs, ctx, &p, &n, &uid, &gid)
	if p != nil {
		defer C.free(p)
	}
	if e != C.EMUNGE_SUCCESS {
		return nil, Identity{}, errFor(ctx, e)
	}
	if n < 0 || n > MaxPayload {
		return nil, Identity{}, fmt.Errorf("%w: payload of %d bytes", ErrInvalid, n)
	}
	return C.GoBytes(p, n), Identity{UID: uint32(uid), GID: uint32(gid)}, nil
}
