package store

// HistorySQL lets the external tests check the query plan of History.
const HistorySQL = historySQL
