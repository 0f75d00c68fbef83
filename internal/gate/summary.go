package gate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

// SummarySchema names the shape of summary.json.
const SummarySchema = "arena.summary/v1"

// SummaryFile is a run's verdicts on a page, beside its results.json.
const SummaryFile = "summary.json"

// Results of a summary: what the command's exit status says.
const (
	ResultPassed      = "passed"      // no check failed
	ResultFailed      = "failed"      // some check failed what the gate asks
	ResultInterrupted = "interrupted" // the run was stopped; its checks cover the cells it finished
)

// Summary is summary.json: a run's verdicts on a page, for CI and scripts. Every check is
// there, whatever the gate; the gate says which of them failed the command.
type Summary struct {
	Schema     string    `json:"schema"`
	Run        string    `json:"run"`
	Scenario   string    `json:"scenario"`
	Preset     string    `json:"preset"`
	Quick      bool      `json:"quick"`
	Status     string    `json:"status"` // the run's
	Started    time.Time `json:"started"`
	FailOn     []string  `json:"fail_on"`
	Thresholds []string  `json:"thresholds"`
	Result     string    `json:"result"`
	Passed     int       `json:"passed"`
	Failed     int       `json:"failed"`
	Skipped    int       `json:"skipped"`
	Checks     []Check   `json:"checks"`
}

// NewSummary is run's summary with the checks g judged.
func NewSummary(run *results.Run, g Gate, checks []Check) Summary {
	s := Summary{Schema: SummarySchema, Run: run.ID, Scenario: run.Scenario.Name, Preset: run.Scenario.Preset, Quick: run.Scenario.Quick,
		Status: run.Status, Started: run.Started, FailOn: g.FailOn, Thresholds: []string{}, Checks: checks}
	if s.FailOn == nil {
		s.FailOn = []string{}
	}
	if s.Checks == nil {
		s.Checks = []Check{}
	}
	for _, th := range g.Thresholds {
		s.Thresholds = append(s.Thresholds, th.Text)
	}
	s.Passed, s.Failed, s.Skipped = Count(checks)
	switch {
	case run.Status == results.RunInterrupted:
		s.Result = ResultInterrupted
	case s.Failed > 0:
		s.Result = ResultFailed
	default:
		s.Result = ResultPassed
	}
	return s
}

// WriteSummary writes s as dir/summary.json, atomically (a temporary file renamed over it).
func WriteSummary(dir string, s Summary) error {
	raw, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, SummaryFile)
	tmp, err := os.CreateTemp(dir, "."+SummaryFile+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	if _, err := tmp.Write(append(raw, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// LoadSummary reads a summary.json (the file, or the run's folder holding it).
func LoadSummary(path string) (Summary, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, SummaryFile)
	}
	var s Summary
	raw, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
