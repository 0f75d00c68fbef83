package cmd

import "testing"

// A bad --export is refused before anything is built or run, on arena run and on arena
// reproduce, saying what it takes.
func TestExportRejectsBadTargets(t *testing.T) {
	setup(t)
	for _, tc := range []struct {
		name string
		arg  string
		want []string
	}{
		{"unknown kind", "influx=http://127.0.0.1:8086", []string{`--export "influx=http://127.0.0.1:8086"`, "prometheus-rw, otlp"}},
		{"no kind", "http://127.0.0.1:9090", []string{"KIND=URL"}},
		{"no scheme", "prometheus-rw=127.0.0.1:9090", []string{"no http:// or https:// URL"}},
		{"credentials in the URL", "otlp=http://me:secret@127.0.0.1:4318", []string{"no credentials"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			refused(t, []string{"run", "isolation", "--export", tc.arg, "--out", out}, tc.want...)
			noWork(t, out)
			refused(t, []string{"reproduce", "--export", tc.arg, "--out", out}, tc.want...)
			noWork(t, out)
		})
	}
}
