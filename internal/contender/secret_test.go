package contender

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// credentials are what a lab's shell or a CI runner may hold that no child of the lab gets:
// the agents' secret, GitHub's runner tokens, a cloud's keys, a registry's password.
var credentials = map[string]string{
	secretEnv:                        "the-agents-secret-0123456789abcdef0123456789abcdef",
	"ACTIONS_RUNTIME_TOKEN":          "runtime-token",
	"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc-token",
	"AWS_SECRET_ACCESS_KEY":          "aws-secret",
	"AWS_SESSION_TOKEN":              "aws-session",
	"NPM_TOKEN":                      "npm-token",
	"ARENA_DB_PASSWORD":              "db-password",
	"github_token":                   "lower-case-token",
	"DOCKER_CREDENTIALS":             "docker",
	"OPENAI_API_KEY":                 "api-key",
	"SSH_PRIVATE_KEY":                "private-key",
	"REGISTRY_PASSWD":                "passwd",
}

// setCredentials puts every one of credentials into this process's environment, with an
// ordinary variable beside them that must get through.
func setCredentials(t *testing.T) {
	t.Helper()
	for k, v := range credentials {
		t.Setenv(k, v)
	}
	t.Setenv("ARENA_TEST_KEEP", "kept")
}

// environOf is the environment pid was started with, read from /proc as any process of
// the same user can.
func environOf(t *testing.T, pid int) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatalf("reading the child's environment: %v", err)
	}
	return envMap(t, strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00"))
}

// noCredentials fails for every credential found in env, and when the ordinary variable did
// not get through (a filter that drops everything proves nothing).
func noCredentials(t *testing.T, what string, env map[string]string) {
	t.Helper()
	for k := range credentials {
		if v, ok := env[k]; ok {
			t.Errorf("%s got %s=%s", what, k, v)
		}
	}
	if env["ARENA_TEST_KEEP"] != "kept" {
		t.Errorf("%s did not get an ordinary variable: ARENA_TEST_KEEP=%q", what, env["ARENA_TEST_KEEP"])
	}
}

// TestStartedContenderHasNoSecret starts a contender as the lab does (Start: its settings'
// environment, taskset, sh -c) with the agents' secret and other credentials in the lab's
// environment, and reads the running process's environment from /proc: none is there.
func TestStartedContenderHasNoSecret(t *testing.T) {
	needTools(t, "taskset")
	setCredentials(t)
	for _, rt := range []string{"java", "node", "go", "python", "rust"} {
		t.Run(rt, func(t *testing.T) {
			m := &Manifest{Name: "secret-" + rt, Runtime: rt, Start: "exec sleep 30", Dir: t.TempDir()}
			in, err := Start(m, StartOptions{Settings: Settings{HeapMB: 64, JDK: JDK{Home: "/fake/jdk", Major: 21}}, CPUs: "0",
				Vars: map[string]string{"WORKER_THREADS": "2"}, LogPath: filepath.Join(t.TempDir(), "x.log")})
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			t.Cleanup(func() { in.Stop() })
			env := environOf(t, execed(t, in.Pid(), "sleep"))
			noCredentials(t, "a started "+rt+" contender", env)
			if env["WORKER_THREADS"] != "2" {
				t.Errorf("the contract variable did not reach it: WORKER_THREADS=%q", env["WORKER_THREADS"])
			}
		})
	}
}

// execed waits until pid runs the program named comm (taskset and sh exec their way to it),
// and returns pid.
func execed(t *testing.T, pid int, comm string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err == nil && strings.TrimSpace(string(raw)) == comm {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d runs %q, not %s, after 5 s (%v)", pid, bytes.TrimSpace(raw), comm, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestBuildHasNoSecret: a contender's build, and so every dependency's build script, runs
// without the agents' secret or any other credential; its shell copies what /proc says it
// was started with.
func TestBuildHasNoSecret(t *testing.T) {
	setCredentials(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.go": "package main\n"})
	m := &Manifest{Name: "secretbuild", Runtime: "go", Build: `cat /proc/$$/environ > environ`,
		Sources: []string{"main.go"}, Start: "true", Dir: dir}
	b := &Builder{CacheDir: t.TempDir(), Settings: Settings{HeapMB: 64}}
	if _, err := b.Build(context.Background(), m, true); err != nil {
		t.Fatalf("Build: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "environ"))
	if err != nil {
		t.Fatal(err)
	}
	noCredentials(t, "a build", envMap(t, strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")))
}

// TestHoldsSecret: the names a child never gets, and some it does.
func TestHoldsSecret(t *testing.T) {
	for k := range credentials {
		if !holdsSecret(k) {
			t.Errorf("%s passes the filter", k)
		}
	}
	for _, k := range []string{"PATH", "HOME", "LANG", "ARENA_JAVA_HOME", "CI", "GOPATH", "KEYBOARD", "MONKEY_TYPE"} {
		if holdsSecret(k) {
			t.Errorf("%s is dropped as a secret", k)
		}
	}
}
