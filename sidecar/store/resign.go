package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/augur-hpc/augur/slurm-plugin/wire"
)

// metaSignatureVersion is the meta key holding the version of the
// signatures the submissions and outcomes are keyed under.
const metaSignatureVersion = "signature_version"

// Resign keys the stored submissions and outcomes under the signatures the
// running build computes, once per signature version: when how a script's
// signature is computed changes (a new predictor), the history recorded
// under the old signatures would otherwise never match a new submission
// again. sign computes the signature of a script run with the arguments
// and environment its submission recorded (arguments nil: not known, as
// from an older shim; environment nil: none recorded). A
// store already at version is left alone; one without a recorded version
// (written before versions were recorded) is re-signed. It returns how
// many submissions changed signature. It runs in one transaction, before
// augurd serves.
func (s *Store) Resign(ctx context.Context, version string, sign func(script string, args, env []string) string) (int, error) {
	if version == "" || sign == nil {
		return 0, fmt.Errorf("store: resign: a version and a signer are needed: %w", ErrInvalid)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: resign: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var have string
	switch err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, metaSignatureVersion).Scan(&have); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return 0, fmt.Errorf("store: resign: %w", err)
	}
	if have == version {
		return 0, nil
	}
	// Each submission's script with its arguments and environment; one
	// signing per distinct script, arguments and environment (scripts are
	// stored once each, and most run with the same arguments or none).
	rows, err := tx.QueryContext(ctx, `
SELECT su.token, su.signature, coalesce(su.request_json, ''), sc.sha256, sc.compression, sc.size_bytes, sc.body
FROM submissions su JOIN scripts sc ON sc.sha256 = su.script_sha256 ORDER BY sc.sha256`)
	if err != nil {
		return 0, fmt.Errorf("store: resign: %w", err)
	}
	type update struct{ token, sig string }
	var updates []update
	sigs := map[string]string{} // sha256, arguments and environment -> signature
	var lastSum []byte
	script, scriptOK := "", false
	for rows.Next() {
		var (
			tok, old, req string
			sum, body     []byte
			compression   string
			size          int64
		)
		if err := rows.Scan(&tok, &old, &req, &sum, &compression, &size, &body); err != nil {
			rows.Close()
			return 0, fmt.Errorf("store: resign: %w", err)
		}
		if !bytes.Equal(sum, lastSum) {
			lastSum = sum
			script, err = decodeScript(body, compression, size, sum)
			if scriptOK = err == nil; !scriptOK {
				s.log.Warn("re-signing: a stored script does not read; its submissions keep their signature", "sha256", fmt.Sprintf("%x", sum), "err", err)
			}
		}
		if !scriptOK {
			continue
		}
		args, env := requestInputs(req)
		key := string(sum) + argsKey(args) + "\x00" + argsKey(env)
		sig, ok := sigs[key]
		if !ok {
			sig = sign(script, args, env)
			sigs[key] = sig
		}
		if sig != old {
			updates = append(updates, update{tok, sig})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("store: resign: %w", err)
	}
	for _, u := range updates {
		if _, err := tx.ExecContext(ctx, `UPDATE submissions SET signature = ? WHERE token = ?`, u.sig, u.token); err != nil {
			return 0, fmt.Errorf("store: resign: %w", err)
		}
	}
	// Outcomes carry their submission's signature (LinkJob and PutOutcome
	// copy it); an outcome not linked yet gets it when it is.
	if _, err := tx.ExecContext(ctx, `
UPDATE outcomes SET signature = (SELECT su.signature FROM submissions su WHERE su.token = outcomes.token)
WHERE token <> '' AND EXISTS (SELECT 1 FROM submissions su WHERE su.token = outcomes.token AND su.signature <> outcomes.signature)`); err != nil {
		return 0, fmt.Errorf("store: resign: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
		metaSignatureVersion, version); err != nil {
		return 0, fmt.Errorf("store: resign: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("store: resign: %w", err)
	}
	return len(updates), nil
}

// requestInputs reads the script arguments and environment a stored
// request carries, or nil.
func requestInputs(reqJSON string) (args, env []string) {
	var r wire.Request
	if reqJSON == "" || json.Unmarshal([]byte(reqJSON), &r) != nil {
		return nil, nil
	}
	return r.ScriptArgs(), r.Env
}

// argsKey tells arguments (or environments) apart, unknown ones from none.
func argsKey(args []string) string {
	if args == nil {
		return "?"
	}
	var b strings.Builder
	for _, a := range args {
		b.WriteString(strconv.Itoa(len(a)))
		b.WriteByte(':')
		b.WriteString(a)
	}
	return "=" + b.String()
}
