package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

// kitScenario is the least a Scenario is, for the kit's tests.
type kitScenario struct{ presets []string }

func (k kitScenario) Name() string                                            { return "kit" }
func (k kitScenario) Title() string                                           { return "" }
func (k kitScenario) Study() string                                           { return "" }
func (k kitScenario) Presets() []string                                       { return k.presets }
func (k kitScenario) Plan(Options) (Plan, error)                              { return Plan{}, nil }
func (k kitScenario) Judge(*results.Run) ([]results.Verdict, []results.Claim) { return nil, nil }

func TestResolvePresets(t *testing.T) {
	sc := kitScenario{presets: []string{"seed", "scale"}}
	r, err := Options{}.Resolve(sc)
	if err != nil || r.Preset != "seed" {
		t.Fatalf("no preset: %q, %v; want the first, seed", r.Preset, err)
	}
	if r, err := (Options{Preset: "scale", Quick: true}).Resolve(sc); err != nil || r.Preset != "scale" || !r.Quick {
		t.Fatalf("scale: %+v, %v", r, err)
	}
	_, err = Options{Preset: "huge"}.Resolve(sc)
	if err == nil || !strings.Contains(err.Error(), `kit has no preset "huge" (presets: seed, scale)`) {
		t.Fatalf("unknown preset: %v", err)
	}
}

func TestResolveOverrides(t *testing.T) {
	sc := kitScenario{presets: []string{"seed"}}
	r, _ := Options{}.Resolve(sc)
	if r.Duration(time.Minute) != time.Minute || r.Timeout(5*time.Second) != 5*time.Second || r.Overridden() {
		t.Fatalf("no flags must keep the preset's: %v %v %v", r.Duration(time.Minute), r.Timeout(5*time.Second), r.Overridden())
	}
	r, _ = Options{Duration: 12 * time.Second, Timeout: 3 * time.Second}.Resolve(sc)
	if r.Duration(time.Minute) != 12*time.Second || r.Timeout(5*time.Second) != 3*time.Second || !r.Overridden() {
		t.Fatalf("flags must win: %v %v", r.Duration(time.Minute), r.Timeout(5*time.Second))
	}
}

func TestWordsCarryTheirTone(t *testing.T) {
	v := Word{Text: "bounded", Tone: results.Good}.Verdict("netty", "slow-on", "why")
	if v.Verdict != "bounded" || v.Tone != results.Good || v.Contender != "netty" || v.Level != "slow-on" || v.Why != "why" {
		t.Fatalf("%+v", v)
	}
	if o := Outcome(results.OutcomeCrashed); o.Tone != results.Bad || o.Text != "crashed" {
		t.Fatalf("a crash reads %+v", o)
	}
}
