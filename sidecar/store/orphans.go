package store

import (
	"context"
	"fmt"
	"time"
)

// FinalOrphaned is the final_state of a submission that no Slurm job will
// ever carry: augurd decided, but the shim had stopped waiting (its deadline
// passed), so slurmctld accepted the job unchanged, without the token. The
// linker marks such rows (daemon.Linker). Reports and training, which join
// submissions to outcomes by job id, never see them; `augur decisions` does.
const FinalOrphaned = "ORPHANED"

// Unlinked is an accepted submission that no job has claimed yet.
type Unlinked struct {
	Token      string
	ReceivedAt time.Time
}

// unlinkedSQL matches the partial index submissions_unlinked (migration 5)
// term for term, so SQLite reads only the unclaimed rows.
const unlinkedSQL = `
SELECT token, received_at_ns FROM submissions
WHERE job_id IS NULL AND final_state = '' AND action = 'accept'
  AND received_at_ns >= ? AND received_at_ns < ?
ORDER BY received_at_ns
LIMIT ?`

// Unlinked returns up to limit accepted submissions received in [from, to)
// that are linked to no job and have no final state, oldest first. Only
// committed rows are seen.
func (s *Store) Unlinked(ctx context.Context, from, to time.Time, limit int) ([]Unlinked, error) {
	rows, err := s.unlinkedStmt.QueryContext(ctx, unixNano(from), unixNano(to), limit)
	if err != nil {
		return nil, fmt.Errorf("store: unlinked submissions: %w", err)
	}
	defer rows.Close()
	var out []Unlinked
	for rows.Next() {
		var u Unlinked
		var at int64
		if err := rows.Scan(&u.Token, &at); err != nil {
			return nil, fmt.Errorf("store: unlinked submissions: %w", err)
		}
		u.ReceivedAt = fromUnixNano(at)
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: unlinked submissions: %w", err)
	}
	return out, nil
}

// MarkOrphaned sets final_state FinalOrphaned on the submission with token,
// if it is still linked to no job and has no final state. It says whether
// the row was marked. Like LinkJob it goes through the write queue, so a
// link queued before it wins; a link that comes after it clears the mark.
func (s *Store) MarkOrphaned(ctx context.Context, token string) (bool, error) {
	if err := validToken(token); err != nil {
		return false, fmt.Errorf("store: mark orphaned %q: %w", token, err)
	}
	var marked bool
	if err := s.enqueue(ctx, op{kind: opOrphan, token: token, added: &marked}); err != nil {
		return false, fmt.Errorf("store: mark %s orphaned: %w", token, err)
	}
	return marked, nil
}
