package contender

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// envMap turns an environment list into a map, failing on a name set twice (which of
// two values a process sees is up to it: the lab must never leave that open).
func envMap(t *testing.T, env []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			t.Errorf("malformed entry %q", kv)
			continue
		}
		if old, dup := out[k]; dup {
			t.Errorf("%s is set twice: %q and %q", k, old, v)
		}
		out[k] = v
	}
	return out
}

func TestSettingsEnv(t *testing.T) {
	// What a developer's shell might carry into the lab.
	inherited := map[string]string{
		"JAVA_TOOL_OPTIONS": "-Xmx8g", "_JAVA_OPTIONS": "-Xmx8g", "JDK_JAVA_OPTIONS": "-Xmx8g",
		"JAVA_OPTS": "-Xmx8g", "JAVA_HOME": "/opt/old-jdk", "NODE_OPTIONS": "--max-old-space-size=8000",
		"GOMAXPROCS": "64", "GOMEMLIMIT": "8GiB", "GOGC": "off", "PYTHONPATH": "/elsewhere", "VIRTUAL_ENV": "/elsewhere/venv",
		"PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1", "PYTHONASYNCIODEBUG": "1",
		"PORT": "9999", "WORKER_THREADS": "500", "DOWNSTREAM_URL": "http://elsewhere", "BACKPRESSURE": "off",
	}
	for k, v := range inherited {
		t.Setenv(k, v)
	}
	t.Setenv("ARENA_TEST_KEEP", "kept")
	path := os.Getenv("PATH")
	jdk := JDK{Home: "/fake/jdk-21", Version: "21.0.2", Major: 21}
	s := Settings{JDK: jdk, HeapMB: 256}

	tests := []struct {
		runtime string
		vars    map[string]string
		want    map[string]string // "" means: must be absent
	}{
		{"java", nil, map[string]string{
			"JAVA_HOME": "/fake/jdk-21", "JAVA_OPTS": "-Xms256m -Xmx256m -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError",
			"PATH": "/fake/jdk-21/bin:" + path, "NODE_OPTIONS": "", "GOMEMLIMIT": "", "NODE_ENV": "",
		}},
		{"node", nil, map[string]string{
			"NODE_OPTIONS": "--max-old-space-size=256", "NODE_ENV": "production", "PATH": path,
			"JAVA_HOME": "", "JAVA_OPTS": "", "GOMEMLIMIT": "",
		}},
		{"go", nil, map[string]string{
			"GOMEMLIMIT": "256MiB", "PATH": path, "JAVA_HOME": "", "JAVA_OPTS": "", "NODE_OPTIONS": "",
		}},
		{"python", nil, map[string]string{ // no heap setting: the lab's memory cap holds it
			"PATH": path, "GOMEMLIMIT": "", "NODE_OPTIONS": "", "JAVA_OPTS": "", "PYTHONPATH": "",
		}},
		{"go", map[string]string{"PORT": "18080", "WORKER_THREADS": "11", "DOWNSTREAM_URL": "http://127.0.0.1:1/"}, map[string]string{
			"PORT": "18080", "WORKER_THREADS": "11", "DOWNSTREAM_URL": "http://127.0.0.1:1/", "BACKPRESSURE": "",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.runtime, func(t *testing.T) {
			m := &Manifest{Name: "c-" + tt.runtime, Runtime: tt.runtime}
			env, err := s.Env(m, tt.vars)
			if err != nil {
				t.Fatalf("Env: %v", err)
			}
			got := envMap(t, env)
			if got["ARENA_TEST_KEEP"] != "kept" {
				t.Errorf("an ordinary variable was not passed on: ARENA_TEST_KEEP=%q", got["ARENA_TEST_KEEP"])
			}
			// Nothing inherited that tunes a runtime survives, unless the lab set it itself.
			for k, v := range inherited {
				if got[k] == v {
					t.Errorf("inherited %s=%s reached the contender", k, v)
				}
			}
			for _, k := range []string{"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "GOMAXPROCS", "GOGC", "PYTHONDONTWRITEBYTECODE", "PYTHONASYNCIODEBUG"} {
				if v, ok := got[k]; ok {
					t.Errorf("%s=%q is set; want it absent", k, v)
				}
			}
			for k, want := range tt.want {
				v, ok := got[k]
				switch {
				case want == "" && ok:
					t.Errorf("%s=%q is set; want it absent", k, v)
				case want != "" && v != want:
					t.Errorf("%s=%q, want %q", k, v, want)
				}
			}
			if tt.vars == nil {
				if v, ok := got["PORT"]; ok {
					t.Errorf("PORT=%q set without a var asking for it", v)
				}
			}
		})
	}
}

func TestSettingsEnvJavaWithoutJDK(t *testing.T) {
	_, err := Settings{HeapMB: 512}.Env(&Manifest{Name: "spring-x", Runtime: "java"}, nil)
	if err == nil {
		t.Fatal("Env of a java contender without a JDK succeeded")
	}
	for _, w := range []string{"spring-x", "JDK 21"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
	// Other runtimes need no JDK.
	for _, rt := range []string{"node", "go"} {
		if _, err := (Settings{HeapMB: 512}).Env(&Manifest{Name: "x", Runtime: rt}, nil); err != nil {
			t.Errorf("Env for %s without a JDK: %v", rt, err)
		}
	}
}

func TestJavaOpts(t *testing.T) {
	for heap, want := range map[int]string{
		512:  "-Xms512m -Xmx512m -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError",
		2048: "-Xms2048m -Xmx2048m -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError",
	} {
		if got := (Settings{HeapMB: heap}).JavaOpts(); got != want {
			t.Errorf("JavaOpts(%d) = %q, want %q", heap, got, want)
		}
	}
}

// The GC log flag quotes its path for -Xlog (a ':' would end the option), bounds the file,
// and refuses a path the start's shell would split.
func TestGCLogFlag(t *testing.T) {
	got, err := GCLogFlag("/runs/r:1/logs/vertx-r2-u5-r1.gc.log")
	want := `-Xlog:gc:file="/runs/r:1/logs/vertx-r2-u5-r1.gc.log":time,uptimemillis,level,tags:filecount=2,filesize=16M`
	if err != nil || got != want {
		t.Errorf("GCLogFlag = %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{"/my runs/x.gc.log", "/runs/x\ty.gc.log", `/runs/"x".gc.log`} {
		if flag, err := GCLogFlag(bad); err == nil {
			t.Errorf("GCLogFlag(%q) = %q, want an error", bad, flag)
		}
	}
}

// fakeJDK makes a folder that looks like a JDK: bin/javac and a release file.
func fakeJDK(t *testing.T, release string) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "jdk")
	writeFiles(t, home, map[string]string{"bin/javac": "#!/bin/sh\n", "release": release})
	return home
}

func TestReadJDK(t *testing.T) {
	tests := []struct {
		name        string
		release     string // "-" for no release file
		noJavac     bool
		wantVersion string
		wantMajor   int
		wantErr     string
	}{
		{"jdk 21", "IMPLEMENTOR=\"Eclipse Adoptium\"\nJAVA_VERSION=\"21.0.2\"\nOS_NAME=\"Linux\"\n", false, "21.0.2", 21, ""},
		{"jdk 25 short", "JAVA_VERSION=\"25\"\n", false, "25", 25, ""},
		{"jdk 17", "JAVA_VERSION=\"17.0.1\"\n", false, "17.0.1", 17, ""},
		{"java 8 old scheme", "JAVA_VERSION=\"1.8.0_392\"\n", false, "1.8.0_392", 8, ""},
		{"unquoted", "JAVA_VERSION=22.0.1\n", false, "22.0.1", 22, ""},
		{"no JAVA_VERSION", "IMPLEMENTOR=\"x\"\n", false, "", 0, "no JAVA_VERSION"},
		{"no release file", "-", false, "", 0, "release"},
		{"no javac: a JRE", "JAVA_VERSION=\"21.0.2\"\n", true, "", 0, "not a JDK"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := fakeJDK(t, tt.release)
			if tt.release == "-" {
				os.Remove(filepath.Join(home, "release"))
			}
			if tt.noJavac {
				os.Remove(filepath.Join(home, "bin", "javac"))
			}
			j, err := readJDK(home)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("readJDK = %+v, %v; want an error containing %q", j, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("readJDK: %v", err)
			}
			if j.Home != home || j.Version != tt.wantVersion || j.Major != tt.wantMajor {
				t.Fatalf("readJDK = %+v, want {%s %s %d}", j, home, tt.wantVersion, tt.wantMajor)
			}
		})
	}
}

func TestFindJDKFromArenaJavaHome(t *testing.T) {
	t.Run("21 is found", func(t *testing.T) {
		home := fakeJDK(t, "JAVA_VERSION=\"21.0.2\"\n")
		t.Setenv("ARENA_JAVA_HOME", home)
		t.Setenv("JAVA_HOME", "")
		j, err := FindJDK()
		if err != nil {
			t.Fatalf("FindJDK: %v", err)
		}
		if j.Home != home || j.Version != "21.0.2" || j.Major != 21 {
			t.Fatalf("FindJDK = %+v, want %s 21.0.2", j, home)
		}
	})
	t.Run("17 is rejected", func(t *testing.T) {
		home := fakeJDK(t, "JAVA_VERSION=\"17.0.1\"\n")
		t.Setenv("ARENA_JAVA_HOME", home)
		// A good JAVA_HOME does not stand in for a bad ARENA_JAVA_HOME.
		t.Setenv("JAVA_HOME", fakeJDK(t, "JAVA_VERSION=\"21.0.2\"\n"))
		j, err := FindJDK()
		if err == nil {
			t.Fatalf("FindJDK accepted Java 17: %+v", j)
		}
		for _, w := range []string{"ARENA_JAVA_HOME=" + home, "17.0.1", "21"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not contain %q", err, w)
			}
		}
	})
	t.Run("not a JDK", func(t *testing.T) {
		home := t.TempDir()
		t.Setenv("ARENA_JAVA_HOME", home)
		j, err := FindJDK()
		if err == nil {
			t.Fatalf("FindJDK accepted an empty folder: %+v", j)
		}
		for _, w := range []string{"ARENA_JAVA_HOME=" + home, "not a JDK"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not contain %q", err, w)
			}
		}
	})
}

// Without ARENA_JAVA_HOME, a new enough $JAVA_HOME is a candidate and an old one is not.
func TestFindJDKFromJavaHome(t *testing.T) {
	t.Setenv("ARENA_JAVA_HOME", "")
	future := fakeJDK(t, "JAVA_VERSION=\"999.0.1\"\n") // newer than anything in /usr/lib/jvm
	t.Setenv("JAVA_HOME", future)
	j, err := FindJDK()
	if err != nil {
		t.Fatalf("FindJDK: %v", err)
	}
	if j.Home != future || j.Major != 999 {
		t.Fatalf("FindJDK = %+v, want the JAVA_HOME %s", j, future)
	}

	old := fakeJDK(t, "JAVA_VERSION=\"11.0.20\"\n")
	t.Setenv("JAVA_HOME", old)
	j, err = FindJDK()
	if err == nil && (j.Home == old || j.Major < MinJava) {
		t.Fatalf("FindJDK chose %+v, older than %d", j, MinJava)
	}
	if err != nil && !strings.Contains(err.Error(), "no JDK 21 or newer") {
		t.Fatalf("FindJDK error %q does not say what is missing", err)
	}
}
