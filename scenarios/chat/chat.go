// Package chat is study 000: one WebSocket chat on every stack. U users in each of R rooms
// join, wait 2 s, and send 500 messages 10 ms apart; every delivery's latency is recorded
// once, and every user checks that it got each message of its room once and in order.
package chat

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	chatload "github.com/arena-lab/arena/internal/chat"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// Tag is the one stream of the chat: deliveries.
const Tag = "delivery"

// ladder is users per room for each room count.
type ladder struct {
	rooms int
	users []int
}

// The study's levels: 1 room with 10–60 users, 2 rooms with 20–35, 4 rooms with 10–17.
var (
	seedLadders  = []ladder{{1, []int{10, 20, 30, 40, 50, 60}}, {2, []int{20, 25, 30, 35}}, {4, []int{10, 12, 15, 17}}}
	quickLadders = []ladder{{1, []int{5, 10}}, {2, []int{5}}, {4, []int{3}}}
	// scale raises one room's users until a contender breaks (latency or faults).
	scaleLadders = []ladder{{1, []int{50, 100, 200, 400, 800, 1600}}}
)

const (
	messages = 500
	period   = 10 * time.Millisecond
	joinWait = 2 * time.Second
	linger   = 30 * time.Second
	// brokenP99 is where the scale preset calls a level broken.
	brokenP99 = time.Second
)

// Scenario is the chat study.
type Scenario struct{}

func (Scenario) Name() string  { return "chat" }
func (Scenario) Title() string { return "Chat: one WebSocket chat on every stack" }
func (Scenario) Study() string {
	return "study 000 (seeds/000): a chat on Akka+Play, Vert.x with and without EventBus, Node with and without cluster, Spring on Tomcat and Jetty"
}
func (Scenario) Presets() []string { return []string{"seed", "scale"} }

func groupName(rooms int) string {
	if rooms == 1 {
		return "1 room"
	}
	return fmt.Sprintf("%d rooms", rooms)
}

func levelName(rooms, users int) string { return fmt.Sprintf("r%d-u%d", rooms, users) }

// Plan builds the ladders of the preset; quick keeps few users and 200 messages.
func (s Scenario) Plan(o scenario.Options) (scenario.Plan, error) {
	r, err := o.Resolve(s)
	if err != nil {
		return scenario.Plan{}, err
	}
	preset := r.Preset
	ladders := seedLadders
	msgs := messages
	switch {
	case preset == "scale":
		ladders = scaleLadders
	case r.Quick:
		ladders, msgs = quickLadders, 200
	}
	wait := r.Timeout(linger)
	plan := scenario.Plan{Preset: preset, Headline: []results.Headline{
		{Figure: "mean", Tag: Tag, Per: results.PerCurve, Label: "mean delivery latency at the most users", Unit: "ms"},
	}, Notes: []string{
		fmt.Sprintf("Every user joins, waits %s, then sends %d messages %s apart; a user is done when it has every message of its room, its own included (or %s after the last send).", joinWait, msgs, period, wait),
		"Latency is from the send time each message carries to its arrival, every delivery counted once (the study divided its sum by the wrong total when R > 1); a copy of a message adds no delivery and no latency.",
		fmt.Sprintf("Each member reads on %s after its last expected message, so that a late copy or another room's message is caught: lost, duplicated, out-of-order and leaked messages are delivery faults, and a contender with any is judged faults.", chatload.DefaultGrace),
		"Only contenders with /chat (features = [\"chat\"]) are measured; the others are listed as unsupported.",
	}}
	if preset == "scale" {
		plan.Notes = append(plan.Notes, fmt.Sprintf("A contender's ladder stops at the first level with a lost, duplicated, reordered or leaked message or a p99 over %s.", brokenP99))
		plan.Broken = func(c results.Cell) bool {
			if c.Outcome.Status != results.OutcomeOK || len(c.Faults) > 0 {
				return true
			}
			for _, t := range c.Tags {
				if len(t.Errors) > 0 || t.Response.P99 > float64(brokenP99/time.Millisecond) {
					return true
				}
			}
			return false
		}
	}
	for _, ld := range ladders {
		for _, u := range ld.users {
			plan.Levels = append(plan.Levels, scenario.Level{
				Name: levelName(ld.rooms, u), Group: groupName(ld.rooms), X: float64(u), XName: "users per room",
				Load: chatload.Load{Tag: Tag, Rooms: ld.rooms, Users: u, Messages: msgs, Period: period, JoinWait: joinWait, Linger: wait},
			})
		}
	}
	return plan, nil
}

// Judge: per contender and room count, whether every delivery arrived once and in order
// and how latency grew; and the study's claims (claims.go).
func (Scenario) Judge(run *results.Run) ([]results.Verdict, []results.Claim) {
	idx := scenario.Index(run)
	var verdicts []results.Verdict
	groups := groupsOf(run)
	for _, c := range run.Contenders {
		for _, g := range groups {
			if v, ok := judge(run, c.Name, g); ok {
				verdicts = append(verdicts, v)
			}
		}
	}
	return verdicts, claims(run, idx)
}

func groupsOf(run *results.Run) []string {
	var gs []string
	for _, l := range run.Scenario.Levels {
		if !slices.Contains(gs, l.Group) {
			gs = append(gs, l.Group)
		}
	}
	return gs
}

// levelsOf lists a group's levels in ladder order.
func levelsOf(run *results.Run, group string) []results.Level {
	var ls []results.Level
	for _, l := range run.Scenario.Levels {
		if l.Group == group {
			ls = append(ls, l)
		}
	}
	return ls
}

// The verdicts: every delivery arrived once and in order (and no other room's), or some did
// not.
var (
	Complete = scenario.Word{Text: "complete", Tone: results.Good}
	Faults   = scenario.Faults
)

func judge(run *results.Run, contender, group string) (results.Verdict, bool) {
	var parts []string
	faulty := false
	measured := 0
	var inconclusive *scenario.Word
	for _, l := range levelsOf(run, group) {
		for _, cs := range run.Summary {
			if cs.Contender != contender || cs.Level != l.Name {
				continue
			}
			if !slices.Contains(cs.Outcomes, results.OutcomeOK) {
				if slices.Contains(cs.Outcomes, results.OutcomeUnsupported) {
					return scenario.Unsupported.Verdict(contender, group, "no /chat: see the contender's README"), true
				}
				parts = append(parts, fmt.Sprintf("%.0f users: %s", l.X, strings.Join(cs.Outcomes, ",")))
				// A level skipped because a lower one broke (scale) lost nothing: the level
				// that broke says why.
				faulty = faulty || slices.ContainsFunc(cs.Outcomes, func(o string) bool { return o != results.OutcomeSkipped })
				continue
			}
			if w, disturbed := scenario.Disturbed(cs); disturbed && !cs.Faulty() { // faults are the server's at any pace
				inconclusive = &w
				parts = append(parts, fmt.Sprintf("%.0f users: %s, not judged", l.X, w.Cause()))
				continue
			}
			for _, t := range cs.Tags {
				measured++
				desc := fmt.Sprintf("%.0f users: mean %s, p99 %s", l.X, results.FormatMs(t.Merged.Mean), results.FormatMs(t.Merged.P99))
				var wrong []string
				if cs.Faulty() {
					wrong = append(wrong, results.FormatFaults(cs.Faults))
				}
				if t.Errors > 0 {
					wrong = append(wrong, kinds(t.ErrKinds))
				}
				if len(wrong) > 0 {
					desc += fmt.Sprintf(" (%s)", strings.Join(wrong, ", "))
					faulty = true
				}
				parts = append(parts, desc)
			}
		}
	}
	var w scenario.Word
	switch {
	case faulty:
		w = Faults
	case measured > 0:
		w = Complete
	case inconclusive != nil:
		w = *inconclusive
	default:
		return results.Verdict{}, false
	}
	return w.Verdict(contender, group, strings.Join(parts, "; ")), true
}

// kinds writes a tag's transport failures: members that could not join or were dropped,
// and, in results written before faults had their own field, the delivery faults.
func kinds(m map[string]int64) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] > 0 {
			out = append(out, fmt.Sprintf("%d %s", m[k], k))
		}
	}
	return strings.Join(out, ", ")
}
