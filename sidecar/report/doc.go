// Package report turns the store's jobs into what people read: sacct-style
// tables (augur sacct), the cluster summary over a time window as text and
// as one self-contained HTML page with inline SVG charts (augur report), and
// one job's story with advice for its user (augur job).
//
// It is pure: it formats and aggregates values handed to it and does no I/O
// of its own beyond the io.Writer it is given; the CLI reads the store and
// the clock and passes them in. Everything here that reads outside input
// (sacct's time formats, -o field lists, -s state lists) has a fuzz test.
//
//	store.Reader ──EachJob──> Builder.Add ──Summary──> WriteText / WriteHTML / JSON
//	store.Reader ──EachJob──> Table.Write (sacct columns, -P/-p/-n, --units, --json)
//	store.Reader ──Job──────> WriteStory (augur job)
package report
