//go:build race

package deepinfer

// raceEnabled: the race detector's shadow memory would swamp an RSS measurement.
const raceEnabled = true
