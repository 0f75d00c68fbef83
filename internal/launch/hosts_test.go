package launch

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// noDNS stands in for the resolver: tests never query DNS. "db.example" resolves, nothing
// else does.
func noDNS(t *testing.T) {
	t.Helper()
	saved := lookupHost
	lookupHost = func(name string) ([]string, error) {
		if name == "db.example" {
			return []string{"192.0.2.10"}, nil
		}
		return nil, errors.New("no such host")
	}
	t.Cleanup(func() { lookupHost = saved })
}

func writeHosts(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ssh_config"), []byte("Host c1\n  HostName 127.0.0.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "hosts.toml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const goodHosts = `# two load hosts and the coordinator's own host as server
ssh_config = "ssh_config"

[server]
name    = "box"
address = "10.213.0.1"
cpus    = "1"

[[client]]
name    = "c1"
ssh     = "c1"
address = "10.213.0.2"
cpus    = "0"

[[client]]
ssh     = "root@db.example"
address = "db.example"
cpus    = "0-1,3"
port    = 7700
`

func TestParseHostsGood(t *testing.T) {
	noDNS(t)
	p := writeHosts(t, goodHosts)
	h, err := ParseHosts(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(filepath.Dir(p), "ssh_config"); h.SSHConfig != want {
		t.Errorf("SSHConfig %q, want %q", h.SSHConfig, want)
	}
	if !reflect.DeepEqual(h.SSHArgs(), []string{"-F", h.SSHConfig}) {
		t.Errorf("SSHArgs %q", h.SSHArgs())
	}
	if want := (ServerHost{Name: "box", Address: "10.213.0.1", CPUs: "1"}); h.Server != want {
		t.Errorf("server %+v, want %+v", h.Server, want)
	}
	want := []ClientHost{
		{Name: "c1", SSH: "c1", Address: "10.213.0.2", CPUs: "0", Port: DefaultPort},
		{Name: "db.example", SSH: "root@db.example", Address: "db.example", CPUs: "0-1,3", Port: 7700},
	}
	if !reflect.DeepEqual(h.Clients, want) {
		t.Errorf("clients\n%+v\nwant\n%+v", h.Clients, want)
	}
	if h.Clients[0].Addr() != "10.213.0.2:7600" {
		t.Errorf("Addr %q", h.Clients[0].Addr())
	}

	// What WriteHosts writes reads back the same.
	again := filepath.Join(t.TempDir(), "again.toml")
	if err := WriteHosts(again, h); err != nil {
		t.Fatal(err)
	}
	h2, err := ParseHosts(again)
	if err != nil {
		b, _ := os.ReadFile(again)
		t.Fatalf("%v\n%s", err, b)
	}
	h2.Path = h.Path
	if !reflect.DeepEqual(h, h2) {
		t.Errorf("read back\n%+v\nwrote\n%+v", h2, h)
	}
}

func TestParseHostsErrors(t *testing.T) {
	noDNS(t)
	server := "[server]\naddress = \"127.0.0.1\"\ncpus = \"0\"\n"
	client := func(extra string) string {
		return "[[client]]\nname = \"c1\"\nssh = \"c1\"\naddress = \"127.0.0.2\"\ncpus = \"1\"\n" + extra
	}
	cases := []struct {
		name, file string
		want       []string // substrings of the error
	}{
		{"syntax", "[server\n", []string{"hosts.toml:2:", "end table name"}},
		{"no server", client(""), []string{"no [server] table"}},
		{"no client", server, []string{"no [[client]] entry"}},
		{"server without address", "[server]\ncpus = \"0\"\n" + client(""), []string{"[server]", "address", "missing"}},
		{"server bad cpus", "[server]\naddress = \"127.0.0.1\"\ncpus = \"0-\"\n" + client(""), []string{"hosts.toml:3:", "cpus", "taskset CPU list"}},
		{"client bad cpus", server + client("") + "[[client]]\nname = \"c2\"\nssh = \"c2\"\naddress = \"127.0.0.3\"\ncpus = \"3-1\"\n", []string{"hosts.toml:13:", "[[client]] 2 (c2)", "cpus \"3-1\""}},
		{"client cpus words", server + "[[client]]\nssh = \"c1\"\naddress = \"127.0.0.2\"\ncpus = \"all\"\n", []string{"[[client]] 1 (c1)", "taskset CPU list"}},
		{"client without address", server + "[[client]]\nname = \"c1\"\nssh = \"c1\"\ncpus = \"1\"\n", []string{"hosts.toml:4:", "address", "missing"}},
		{"client without ssh", server + "[[client]]\nname = \"c1\"\naddress = \"127.0.0.2\"\ncpus = \"1\"\n", []string{"no ssh destination"}},
		{"ssh looks like an option", server + "[[client]]\nssh = \"-oProxyCommand=x\"\naddress = \"127.0.0.2\"\ncpus = \"1\"\n", []string{"not an ssh destination"}},
		{"duplicate names", server + client("") + client(""), []string{"hosts.toml:10:", "name \"c1\" is also [[client]] 1 (c1)'s"}},
		{"client named as server", server + "[[client]]\nname = \"server\"\nssh = \"c1\"\naddress = \"127.0.0.2\"\ncpus = \"1\"\n", []string{"also [server]'s"}},
		{"same address and port", server + client("") + "[[client]]\nname = \"c2\"\nssh = \"c2\"\naddress = \"127.0.0.2\"\ncpus = \"1\"\n", []string{"127.0.0.2:7600 is also"}},
		{"hostname that does not resolve", server + "[[client]]\nssh = \"c1\"\naddress = \"nosuch.example\"\ncpus = \"1\"\n", []string{"address \"nosuch.example\"", "does not resolve"}},
		{"address with port", server + "[[client]]\nssh = \"c1\"\naddress = \"127.0.0.2:7600\"\ncpus = \"1\"\n", []string{"give no port"}},
		{"bad port", server + client("port = 70000\n"), []string{"hosts.toml:9:", "port 70000"}},
		{"unknown field", server + client("cpu = \"1\"\n"), []string{"hosts.toml:9:", "unknown field \"client.cpu\""}},
		{"missing ssh_config", "ssh_config = \"nope\"\n" + server + client(""), []string{"hosts.toml:1:", "ssh_config \"nope\""}},
		{"bad name", server + "[[client]]\nname = \"a b\"\nssh = \"c1\"\naddress = \"127.0.0.2\"\ncpus = \"1\"\n", []string{"name \"a b\""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseHosts(writeHosts(t, c.file))
			if err == nil {
				t.Fatalf("no error for\n%s", c.file)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestCheckCPUList(t *testing.T) {
	for _, ok := range []string{"0", "1", "0-1", "0-1,3", "0,2,4", "0-7:2", " 0 , 1"} {
		if err := checkCPUList(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a", "-1", "1-", "3-1", "0,,1", "0-7:0", "1 2", "99999"} {
		if err := checkCPUList(bad); err == nil {
			t.Errorf("%q passed", bad)
		}
	}
}

func TestParseHostsMissingFile(t *testing.T) {
	if _, err := ParseHosts(filepath.Join(t.TempDir(), "none.toml")); err == nil || !strings.Contains(err.Error(), "hosts file") {
		t.Errorf("err %v", err)
	}
}

// TestKnownHostsPinsKeys: a hosts file's known_hosts, relative to it, makes every ssh and
// scp call check the hosts' keys against that file alone and refuse any other; a file
// others may write in, or none, is refused.
func TestKnownHostsPinsKeys(t *testing.T) {
	noDNS(t)
	p := writeHosts(t, "known_hosts = \"pinned\"\n"+goodHosts)
	kh := filepath.Join(filepath.Dir(p), "pinned")
	if _, err := ParseHosts(p); err == nil || !strings.Contains(err.Error(), "known_hosts") {
		t.Errorf("a known_hosts that does not exist: %v", err)
	}
	if err := os.WriteFile(kh, []byte("10.213.0.2 ssh-ed25519 AAAA\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := ParseHosts(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-F", h.SSHConfig, "-o", "UserKnownHostsFile=" + kh, "-o", "GlobalKnownHostsFile=/dev/null", "-o", "StrictHostKeyChecking=yes"}
	if !reflect.DeepEqual(h.SSHArgs(), want) {
		t.Errorf("SSHArgs %q, want %q", h.SSHArgs(), want)
	}
	if err := os.Chmod(kh, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseHosts(p); err == nil || !strings.Contains(err.Error(), "chmod go-w") {
		t.Errorf("a known_hosts others may write: %v", err)
	}
}

// FuzzParseHosts: whatever a hosts file holds, ParseHosts returns hosts or an error, never
// panics, and hosts it returns have a server and clients whose addresses are no flags.
func FuzzParseHosts(f *testing.F) {
	f.Add(goodHosts)
	f.Add("known_hosts = \"k\"\n" + goodHosts)
	f.Add("[server]\naddress = \"-oProxyCommand=x\"\ncpus = \"1\"\n[[client]]\nssh = \"-oProxyCommand=x\"\naddress = \"1.2.3.4\"\ncpus = \"0\"\n")
	f.Add("[server]\n[[client]]\n")
	f.Fuzz(func(t *testing.T, text string) {
		saved := lookupHost
		lookupHost = func(string) ([]string, error) { return nil, errors.New("no DNS in a fuzz test") }
		defer func() { lookupHost = saved }()
		dir := t.TempDir()
		p := filepath.Join(dir, "hosts.toml")
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		h, err := ParseHosts(p)
		if err != nil {
			return
		}
		if h.Server.Address == "" || len(h.Clients) == 0 {
			t.Fatalf("hosts without a server address or clients: %+v", h)
		}
		for _, c := range append([]ClientHost{h.Server.Agent()}, h.Clients...) {
			if strings.HasPrefix(c.SSH, "-") || strings.HasPrefix(c.Address, "-") {
				t.Fatalf("a host that is a flag: %+v", c)
			}
		}
	})
}
