//go:build !race

package deepinfer

const raceEnabled = false
