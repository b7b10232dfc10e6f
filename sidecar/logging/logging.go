// Package logging builds the slog logger augurd and the CLI share, from the
// config's log section, with a level that SIGHUP can change.
package logging

import (
	"io"
	"log/slog"
	"strings"

	"github.com/augur-hpc/augur/sidecar/config"
)

// Level maps a config level name to slog's.
func Level(name string) slog.Level {
	switch strings.ToLower(name) {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// New returns a logger writing to w and the variable holding its level.
func New(w io.Writer, c config.Log) (*slog.Logger, *slog.LevelVar) {
	lvl := new(slog.LevelVar)
	lvl.Set(Level(c.Level))
	opts := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if c.Format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(h), lvl
}
