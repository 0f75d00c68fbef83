package results

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// File names inside a run's folder.
const (
	JSONFile = "results.json"
	CSVFile  = "results.csv"
)

// Save writes results.json and results.csv into dir, each atomically (a temp file renamed
// over the old one), so a run stopped at any moment leaves the last complete version.
func Save(run *Run, dir string) error {
	if err := writeJSON(filepath.Join(dir, JSONFile), run); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, CSVFile), func(w io.Writer) error { return WriteCSV(run, w) })
}

// writeJSON writes v as indented JSON to path, atomically.
func writeJSON(path string, v any) error {
	return writeAtomic(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}

// Load reads a run's results.json; path is the file or its folder. A v1 file is read into
// v2's shape. A file whose ids are not of the id form is refused: an id names folders and
// files (a resumed run's, compare's page), and one read from a file must not be a path.
func Load(path string) (*Run, error) {
	raw, path, err := readFile(path, JSONFile)
	if err != nil {
		return nil, err
	}
	return parseRun(raw, path)
}

// parseRun is Load's reading of raw, the file at path.
func parseRun(raw []byte, path string) (*Run, error) {
	var run Run
	if err := json.Unmarshal(raw, &run); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := run.checkIDs(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch run.Schema {
	case SchemaVersion:
	case schemaV1:
		if err := fromV1(raw, &run); err != nil {
			return nil, fmt.Errorf("%s: reading schema %s: %w", path, schemaV1, err)
		}
	default:
		return nil, fmt.Errorf("%s: schema %q, this arena reads %q (and %q)", path, run.Schema, SchemaVersion, schemaV1)
	}
	return &run, nil
}

// readFile reads path, or file in the folder path; it returns the bytes and the path it read.
func readFile(path, file string) ([]byte, string, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, file)
	}
	raw, err := os.ReadFile(path)
	return raw, path, err
}

// schemaV1 is the shape results.json had before loads kept their own figures.
const schemaV1 = "arena.results/v1"

// fromV1 moves what a v1 file kept in a cell's "stream" field (study 003's figures) to where
// v2 keeps it: the cell's figures under the kind "stream", and the numbers summarised over
// repeats (delivered messages/s, and what the server said it dropped).
func fromV1(raw []byte, run *Run) error {
	var old struct {
		Cells []struct {
			Stream json.RawMessage `json:"stream"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(raw, &old); err != nil {
		return err
	}
	for i, c := range old.Cells {
		if len(c.Stream) == 0 || string(c.Stream) == "null" || i >= len(run.Cells) {
			continue
		}
		var figures struct {
			PerSecond float64 `json:"delivered_per_s"`
			Server    *struct {
				Dropped int64 `json:"dropped"`
			} `json:"server"`
		}
		if err := json.Unmarshal(c.Stream, &figures); err != nil {
			return fmt.Errorf("cell %d: %w", i, err)
		}
		cell := &run.Cells[i]
		cell.Figures = map[string]json.RawMessage{"stream": c.Stream}
		cell.Numbers = map[string]float64{"delivered_per_s": figures.PerSecond}
		if figures.Server != nil {
			cell.Numbers["dropped"] = float64(figures.Server.Dropped)
		}
	}
	run.Schema = SchemaVersion
	summary, err := Summarise(run.Cells) // v1 summaries had no numbers
	if err != nil {
		return err
	}
	run.Summary = summary
	return nil
}

func writeAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil { // CreateTemp makes 0600; results are for reading
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// CSVHeader is results.csv's first row: one row per cell and tag follows.
var CSVHeader = []string{
	"scenario", "preset", "contender", "level", "repeat", "outcome", "tag",
	"sent", "completed", "errors", "error_pct", "non_2xx", "late", "rps",
	"resp_p50_ms", "resp_p90_ms", "resp_p99_ms", "resp_p999_ms", "resp_max_ms", "resp_mean_ms",
	"svc_p50_ms", "svc_p99_ms",
	"server_cpu_pct_mean", "server_rss_mb_max", "server_threads_max", "client_cpu_pct_mean", "client_bound",
}

// errorPct is errs per sent in %, as TagSummary.ErrorPct is over repeats: the row's error
// rate beside its latency and requests/s.
func errorPct(errs, sent int64) float64 {
	if sent == 0 {
		return 0
	}
	return round3(float64(errs) / float64(sent) * 100)
}

// WriteCSV writes one row per cell and tag, for spreadsheets and scripts.
func WriteCSV(run *Run, w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, c := range run.Cells {
		for _, t := range c.Tags {
			var errs, non2xx int64
			for _, n := range t.Errors {
				errs += n
			}
			classes := make([]string, 0, len(t.Status))
			for k := range t.Status {
				classes = append(classes, k)
			}
			sort.Strings(classes)
			for _, k := range classes {
				if k != "2xx" {
					non2xx += t.Status[k]
				}
			}
			row := []string{
				run.Scenario.Name, run.Scenario.Preset, c.Contender, c.Level, strconv.Itoa(c.Repeat), c.Outcome.Status, t.Tag,
				i(t.Sent), i(t.Completed), i(errs), f(errorPct(errs, t.Sent)), i(non2xx), i(t.Late), f(t.RPS),
				f(t.Response.P50), f(t.Response.P90), f(t.Response.P99), f(t.Response.P999), f(t.Response.Max), f(t.Response.Mean),
				f(t.Service.P50), f(t.Service.P99),
				f(round3(c.Server.Summary.CPUPctMean)), f(round3(c.Server.Summary.RSSMBMax)), strconv.Itoa(int(c.Server.Summary.ThreadsMax)),
				f(round3(c.Client.Summary.CPUPctMean)), strconv.FormatBool(c.ClientBound),
			}
			if c.Server.Unprobed != "" { // no server resources (a target without its pid): empty, never zeros
				row[22], row[23], row[24] = "", "", ""
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
