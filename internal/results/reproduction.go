package results

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"
)

// ReproductionSchema names the shape of reproduction.json.
const ReproductionSchema = "arena.reproduction/v1"

// ReproductionFile is a reproduction's record, in its folder beside its runs.
const ReproductionFile = "reproduction.json"

// Reproduction is one `arena reproduce`: its plan of runs, each run's id and status as it
// goes. Its folder holds the record, every run's folder and the findings.
type Reproduction struct {
	Schema   string     `json:"schema"`
	ID       string     `json:"id"` // the folder's name
	Command  []string   `json:"command"`
	Started  time.Time  `json:"started"`
	Finished *time.Time `json:"finished,omitempty"`
	Status   string     `json:"status"` // one of the Run* statuses
	Repeat   int        `json:"repeat"` // the studies' forms' repeats; each step keeps its own
	Only     []string   `json:"only,omitempty"`
	Quick    bool       `json:"quick,omitempty"`
	Steps    []Step     `json:"steps"`
	// Notes say, per scenario, what of the study cannot run here and what runs instead.
	Notes []string `json:"notes,omitempty"`
}

// The two parts of a reproduction: the studies' own stacks in the studies' forms, then the
// rest of the matrix.
const (
	PartStudies = "studies"
	PartMatrix  = "matrix"
)

// Step is one run of a reproduction: a scenario in one form on some contenders, as the run
// spec it is carried out with (its scenario, preset, quick, levels, duration_s, repeat and
// contenders; the lab's CPUs and heap are the reproduction's, its id is Run).
type Step struct {
	Part string `json:"part"` // PartStudies or PartMatrix
	// RunSpec's Repeat is 0 in a reproduction recorded before steps kept their own: the
	// reproduction's Repeat.
	RunSpec
	Why string `json:"why"`
	// EstimateS is the planned length in seconds: loads, warm-ups, starts and stops.
	EstimateS float64 `json:"estimate_s"`
	// Run is the run's id (its folder), once begun; Status its status when last seen.
	Run    string `json:"run,omitempty"`
	Status string `json:"status,omitempty"`
	// Forced are the differences a resume with --force-resume carried this step on despite.
	Forced []string `json:"forced,omitempty"`
	// Added is when `arena reproduce --resume … --add` appended the step, after the
	// reproduction began; nil for the steps it was planned with.
	Added *time.Time `json:"added,omitempty"`
}

// SaveReproduction writes rep's record into dir, atomically.
func SaveReproduction(rep *Reproduction, dir string) error {
	return writeJSON(filepath.Join(dir, ReproductionFile), rep)
}

// LoadReproduction reads a reproduction's record; path is the file or its folder. A record
// whose ids are not of the id form (CheckIDs) is refused: a step's run id names its folder.
func LoadReproduction(path string) (*Reproduction, error) {
	raw, path, err := readFile(path, ReproductionFile)
	if err != nil {
		return nil, err
	}
	return parseReproduction(raw, path)
}

// parseReproduction is LoadReproduction's reading of raw, the file at path.
func parseReproduction(raw []byte, path string) (*Reproduction, error) {
	var rep Reproduction
	if err := json.Unmarshal(raw, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if rep.Schema != ReproductionSchema {
		return nil, fmt.Errorf("%s: schema %q, this arena reads %q", path, rep.Schema, ReproductionSchema)
	}
	if err := rep.CheckIDs(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &rep, nil
}
