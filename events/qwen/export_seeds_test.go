package qwen

// FuzzSeeds lends the codec's fuzz seeds to the external test package
// (acts_fuzz_test.go decides turns, and machines/turnverdict imports this
// package through guards).
var FuzzSeeds = fuzzSeeds
