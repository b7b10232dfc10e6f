package training

import "github.com/augur-hpc/augur/predictor/forest"

// predictorForest keeps test forests small and fast.
func predictorForest() forest.Config { return forest.Config{Trees: 10, Seed: 1} }
