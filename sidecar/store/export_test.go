package store

// HistorySQL lets the external tests check the query plan of History.
const HistorySQL = historySQL

// SchemaVersion is the version this build migrates to.
var SchemaVersion = len(migrations)
