package cmd

import (
	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/export"
	"github.com/arena-lab/arena/internal/lab"
)

// exportFlags send every measured cell to the user's Prometheus or OpenTelemetry receiver
// (arena run and arena reproduce: --export KIND=URL, repeatable).
type exportFlags struct {
	raw       []string
	exporters []lab.Exporter
}

func (f *exportFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.raw, "export", nil, "send every cell's one-second windows (requests/s, errors, latency histogram and percentiles; "+
		"the server's CPU, RSS and threads), each at its own time, as it is saved: prometheus-rw=URL (Prometheus remote write, "+
		"e.g. http://127.0.0.1:9090/api/v1/write) or otlp=URL (OTLP/HTTP, e.g. http://127.0.0.1:4318/v1/metrics); "+
		"repeat for more; a receiver that fails is a note, never a failed run (docs/export.md)")
}

// parse reads every --export once: a kind arena knows and an http(s) URL. Nothing is sent
// yet; an unreachable receiver is said at the first cell.
func (f *exportFlags) parse() error {
	f.exporters = nil
	for _, raw := range f.raw {
		t, err := export.ParseTarget(raw)
		if err != nil {
			return err
		}
		e, err := export.New(t)
		if err != nil {
			return err
		}
		f.exporters = append(f.exporters, e)
	}
	return nil
}
