// Package launch reads the hosts file of a multi-host run and starts the load agents on the
// client hosts over SSH: it copies the arena binary there, starts `arena agent` pinned with
// taskset, and on stop leaves nothing of its own behind.
package launch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// DefaultPort is where an agent listens when its client entry names no port (the agent's
// own default).
const DefaultPort = 7600

// Hosts is a parsed hosts file: the contender's host and the load agents' hosts.
type Hosts struct {
	Path      string // the file, as given
	SSHConfig string // absolute path of the ssh_config for every ssh and scp call, or ""
	// KnownHosts is the absolute path of a known_hosts file every ssh and scp call checks the
	// hosts' keys against, refusing a host whose key is not in it; "" for ssh's own choice.
	KnownHosts string
	Server     ServerHost   // where the contender runs
	Clients    []ClientHost // where the load agents run, in file order
}

// ServerHost is where the contender runs.
type ServerHost struct {
	Name    string // for the report
	Address string // where the agents reach the contender; the contender binds it
	CPUs    string // taskset list for the contender
	SSH     string // ssh destination; empty means the coordinator's own host
	// Over SSH only: Root is the lab's folder on that host (a clone of the same revision,
	// where the contenders are built); LabCPUs the CPUs the server agent (the lab, its
	// probes) is pinned to, apart from the contender's; Port its agent's port.
	Root    string
	LabCPUs string
	Port    int
}

// Agent is the server host as an agent to start over SSH: the lab in Root, listening on
// Address:Port, allowed its own CPUs and the contender's (the lab pins itself to LabCPUs
// and the contender to CPUs; it may only hand out CPUs it is allowed).
func (s ServerHost) Agent() ClientHost {
	return ClientHost{Name: s.Name, SSH: s.SSH, Address: s.Address, CPUs: s.LabCPUs + "," + s.CPUs, Port: s.Port, Root: s.Root, Server: true}
}

// ClientHost is where one load agent runs.
type ClientHost struct {
	Name    string // the agent's name, for logs and the report
	SSH     string // ssh destination: [user@]host, or a Host of the ssh_config
	Address string // where the agent listens and the coordinator dials it
	CPUs    string // taskset list the agent is pinned to
	Port    int    // the agent's port
	Root    string // the folder the agent runs in, with ARENA_ROOT set to it; "" for none
	Server  bool   // a server agent (it carries the run out), not a load agent
}

// Addr is host:port where the coordinator reaches this client's agent.
func (c ClientHost) Addr() string { return net.JoinHostPort(c.Address, strconv.Itoa(c.Port)) }

// SSHArgs are the base arguments of every ssh and scp call for these hosts: ["-F", config]
// when the file names an ssh_config, and the known_hosts file it names, strictly checked.
func (h *Hosts) SSHArgs() []string {
	var args []string
	if h.SSHConfig != "" {
		args = append(args, "-F", h.SSHConfig)
	}
	if h.KnownHosts != "" {
		// Only this file's keys: a host whose key is missing or another is refused, never
		// added (the key pinned, as the agents' TLS key is).
		args = append(args, "-o", "UserKnownHostsFile="+h.KnownHosts, "-o", "GlobalKnownHostsFile=/dev/null", "-o", "StrictHostKeyChecking=yes")
	}
	return args
}

// fileHosts is the file's shape; pointers tell a missing port from a zero one.
type fileHosts struct {
	SSHConfig  string       `toml:"ssh_config"`
	KnownHosts string       `toml:"known_hosts"`
	Server     *fileServer  `toml:"server"`
	Client     []fileClient `toml:"client"`
}

// fileServer is the file's [server] table.
type fileServer struct {
	Name    string `toml:"name"`
	Address string `toml:"address"`
	CPUs    string `toml:"cpus"`
	SSH     string `toml:"ssh"`
	Root    string `toml:"root"`
	LabCPUs string `toml:"lab_cpus"`
	Port    *int   `toml:"port"`
}

// fileClient is one of the file's [[client]] entries.
type fileClient struct {
	Name    string `toml:"name"`
	SSH     string `toml:"ssh"`
	Address string `toml:"address"`
	CPUs    string `toml:"cpus"`
	Port    *int   `toml:"port"`
}

// lookupHost resolves a host name; tests replace it so that they never query DNS.
var lookupHost = func(name string) ([]string, error) {
	return net.DefaultResolver.LookupHost(context.Background(), name)
}

// ParseHosts reads and checks a hosts file. Its errors name the file, the line when it can
// be found, the entry and the field, and say what a valid value looks like.
func ParseHosts(path string) (*Hosts, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("hosts file: %w", err)
	}
	var f fileHosts
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s:%d: %s", path, pe.Position.Line, pe.Message)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	pos := filePositions{path: path, lines: keyLines(string(data))}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, pos.unknownField(und[0])
	}
	h := &Hosts{Path: path}
	if f.SSHConfig != "" {
		if h.SSHConfig, err = sshConfigOf(f.SSHConfig, pos); err != nil {
			return nil, err
		}
	}
	if f.KnownHosts != "" {
		if h.KnownHosts, err = knownHostsOf(f.KnownHosts, pos); err != nil {
			return nil, err
		}
	}
	if f.Server == nil {
		return nil, fmt.Errorf("%s: no [server] table: name the contender's host with its address and cpus", path)
	}
	if h.Server, err = serverOf(f.Server, pos); err != nil {
		return nil, err
	}
	if len(f.Client) == 0 {
		return nil, fmt.Errorf("%s: no [[client]] entry: name at least one load host with ssh, address and cpus", path)
	}
	if h.Clients, err = clientsOf(f.Client, h.Server.Name, pos); err != nil {
		return nil, err
	}
	return h, nil
}

// filePositions says where in a hosts file a key is, for its errors.
type filePositions struct {
	path  string
	lines map[lineKey]int
}

// at is path:line of the key of an entry (index among a section's entries), else of its
// table's header, else the path alone.
func (p filePositions) at(section string, index int, key string) string {
	if n, ok := p.lines[lineKey{section, index, key}]; ok {
		return fmt.Sprintf("%s:%d", p.path, n)
	}
	if n, ok := p.lines[lineKey{section, index, ""}]; ok {
		return fmt.Sprintf("%s:%d", p.path, n)
	}
	return p.path
}

// unknownField is the error for a key the file's shape has no place for, at its first line.
func (p filePositions) unknownField(k toml.Key) error {
	section, index, key := "", 0, k.String()
	if len(k) > 1 {
		section, key = k[0], k[len(k)-1]
		if section == "client" {
			index = -1 // not known from the key: the line search below finds the first
		}
	}
	where, first := p.path, 0
	for lk, n := range p.lines {
		if lk.section == section && lk.key == key && (index < 0 || lk.index == index) && (first == 0 || n < first) {
			first = n
			where = fmt.Sprintf("%s:%d", p.path, n)
		}
	}
	return fmt.Errorf("%s: unknown field %q: a hosts file has ssh_config, known_hosts, [server] with name, address, cpus, ssh, root, lab_cpus, port, and [[client]] entries with name, ssh, address, cpus, port", where, k.String())
}

// checkField is fn's verdict on an entry's field, as an error that says where.
func checkField(where, entry, field, value string, fn func(string) error) error {
	if err := fn(value); err != nil {
		return fmt.Errorf("%s: %s: %s %q: %v", where, entry, field, value, err)
	}
	return nil
}

// sshConfigOf is the file's ssh_config as an absolute path (~/ is the home folder, a relative
// path the hosts file's folder), which must exist.
func sshConfigOf(given string, pos filePositions) (string, error) {
	cfg := given
	if strings.HasPrefix(cfg, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			cfg = filepath.Join(home, cfg[2:])
		}
	}
	if !filepath.IsAbs(cfg) {
		cfg = filepath.Join(filepath.Dir(pos.path), cfg)
	}
	cfg, err := filepath.Abs(cfg)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(cfg); err != nil {
		return "", fmt.Errorf("%s: ssh_config %q: %v: give a path to an existing ssh_config, relative to the hosts file", pos.at("", 0, "ssh_config"), given, err)
	}
	return cfg, nil
}

// knownHostsOf is the hosts file's known_hosts, absolute: a file that exists, which no one but
// its owner may write (a key added by another user would pin their host).
func knownHostsOf(given string, pos filePositions) (string, error) {
	path, err := sshConfigOf(given, pos)
	if err != nil {
		return "", fmt.Errorf("%s: known_hosts %q: give a path to an existing known_hosts file, relative to the hosts file", pos.at("", 0, "known_hosts"), given)
	}
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s: known_hosts %q: not a file", pos.at("", 0, "known_hosts"), given)
	}
	if st.Mode().Perm()&0o022 != 0 {
		return "", fmt.Errorf("%s: known_hosts %s has mode %04o: others may add keys to it; chmod go-w %s", pos.at("", 0, "known_hosts"), path, st.Mode().Perm(), path)
	}
	return path, nil
}

// serverOf is the file's [server], checked.
func serverOf(s *fileServer, pos filePositions) (ServerHost, error) {
	at := func(key string) string { return pos.at("server", 0, key) }
	srv := ServerHost{Name: s.Name, Address: s.Address, CPUs: s.CPUs, SSH: s.SSH}
	if srv.Name == "" {
		srv.Name = "server"
	}
	if err := checkName(srv.Name); err != nil {
		return srv, fmt.Errorf("%s: [server]: name %q: %v", at("name"), srv.Name, err)
	}
	if err := checkField(at("address"), "[server]", "address", s.Address, checkAddress); err != nil {
		return srv, err
	}
	if err := checkField(at("cpus"), "[server]", "cpus", s.CPUs, checkCPUList); err != nil {
		return srv, err
	}
	if s.SSH == "" {
		if s.Root != "" || s.LabCPUs != "" || s.Port != nil {
			return srv, fmt.Errorf("%s: [server]: root, lab_cpus and port are for a server host reached over SSH (ssh = …); without ssh the contender runs on this host", at(""))
		}
		return srv, nil
	}
	if err := checkField(at("ssh"), "[server]", "ssh", s.SSH, checkDestination); err != nil {
		return srv, err
	}
	// A server host over SSH runs the lab there: it needs the lab's folder, and CPUs for
	// the lab itself apart from the contender's.
	srv.Root, srv.LabCPUs, srv.Port = s.Root, s.LabCPUs, DefaultPort
	if !filepath.IsAbs(s.Root) {
		return srv, fmt.Errorf("%s: [server]: root %q: give the absolute path of the lab's folder on that host (a clone of this revision): the contender is built and started there", at("root"), s.Root)
	}
	if err := checkField(at("lab_cpus"), "[server]", "lab_cpus", s.LabCPUs, checkCPUList); err != nil {
		return srv, err
	}
	if s.Port != nil {
		if *s.Port < 1 || *s.Port > 65535 {
			return srv, fmt.Errorf("%s: [server]: port %d: give a TCP port from 1 to 65535 (default %d)", at("port"), *s.Port, DefaultPort)
		}
		srv.Port = *s.Port
	}
	return srv, nil
}

// clientsOf is the file's [[client]] entries, checked: every host a name of its own (the
// server's, serverName, included), every agent an address and port of its own.
func clientsOf(clients []fileClient, serverName string, pos filePositions) ([]ClientHost, error) {
	names := map[string]string{serverName: "[server]"}
	addrs := map[string]string{}
	var out []ClientHost
	for i, c := range clients {
		ch, entry, err := clientOf(c, i, pos)
		if err != nil {
			return nil, err
		}
		if prev, dup := names[ch.Name]; dup {
			return nil, fmt.Errorf("%s: %s: name %q is also %s's: give every host its own name", pos.at("client", i, "name"), entry, ch.Name, prev)
		}
		names[ch.Name] = entry
		if ch.Port, err = clientPlace(c, entry, func(key string) string { return pos.at("client", i, key) }); err != nil {
			return nil, err
		}
		if prev, dup := addrs[ch.Addr()]; dup {
			return nil, fmt.Errorf("%s: %s: %s is also %s's: two agents cannot listen on one address and port", pos.at("client", i, "port"), entry, ch.Addr(), prev)
		}
		addrs[ch.Addr()] = entry
		out = append(out, ch)
	}
	return out, nil
}

// clientPlace checks a [[client]]'s address and cpus, and returns its port (DefaultPort when
// none is given); at is where a key of it is.
func clientPlace(c fileClient, entry string, at func(key string) string) (int, error) {
	if err := checkField(at("address"), entry, "address", c.Address, checkAddress); err != nil {
		return 0, err
	}
	if err := checkField(at("cpus"), entry, "cpus", c.CPUs, checkCPUList); err != nil {
		return 0, err
	}
	if c.Port == nil {
		return DefaultPort, nil
	}
	if *c.Port < 1 || *c.Port > 65535 {
		return 0, fmt.Errorf("%s: %s: port %d: give a TCP port from 1 to 65535 (default %d)", at("port"), entry, *c.Port, DefaultPort)
	}
	return *c.Port, nil
}

// clientOf is the file's i-th [[client]] with its ssh destination and name checked, and how
// errors name it.
func clientOf(c fileClient, i int, pos filePositions) (ClientHost, string, error) {
	at := func(key string) string { return pos.at("client", i, key) }
	entry := fmt.Sprintf("[[client]] %d", i+1)
	ch := ClientHost{Name: c.Name, SSH: c.SSH, Address: c.Address, CPUs: c.CPUs, Port: DefaultPort}
	if ch.Name == "" { // the destination's host part
		ch.Name = ch.SSH[strings.LastIndex(ch.SSH, "@")+1:]
	}
	if ch.Name != "" {
		entry += fmt.Sprintf(" (%s)", ch.Name)
	}
	if c.SSH == "" {
		return ch, entry, fmt.Errorf("%s: %s: no ssh destination: give ssh = \"[user@]host\" or a Host of the ssh_config", at("ssh"), entry)
	}
	if err := checkField(at("ssh"), entry, "ssh", c.SSH, checkDestination); err != nil {
		return ch, entry, err
	}
	if err := checkName(ch.Name); err != nil {
		return ch, entry, fmt.Errorf("%s: %s: name %q: %v", at("name"), entry, ch.Name, err)
	}
	return ch, entry, nil
}

// WriteHosts writes h as a hosts file that ParseHosts reads back: what a test, or a tool
// that makes its hosts, hands to `arena run --hosts`. SSHConfig is written as given.
func WriteHosts(path string, h *Hosts) error {
	type server struct {
		Name    string `toml:"name"`
		Address string `toml:"address"`
		CPUs    string `toml:"cpus"`
		SSH     string `toml:"ssh,omitempty"`
		Root    string `toml:"root,omitempty"`
		LabCPUs string `toml:"lab_cpus,omitempty"`
		Port    int    `toml:"port,omitzero"`
	}
	type client struct {
		Name    string `toml:"name"`
		SSH     string `toml:"ssh"`
		Address string `toml:"address"`
		CPUs    string `toml:"cpus"`
		Port    int    `toml:"port,omitzero"`
	}
	out := struct {
		SSHConfig  string   `toml:"ssh_config,omitempty"`
		KnownHosts string   `toml:"known_hosts,omitempty"`
		Server     server   `toml:"server"`
		Client     []client `toml:"client"`
	}{SSHConfig: h.SSHConfig, KnownHosts: h.KnownHosts, Server: server(h.Server)}
	for _, c := range h.Clients {
		out.Client = append(out.Client, client{Name: c.Name, SSH: c.SSH, Address: c.Address, CPUs: c.CPUs, Port: c.Port})
	}
	var b strings.Builder
	if err := toml.NewEncoder(&b).Encode(out); err != nil {
		return fmt.Errorf("hosts file: %w", err)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

func checkName(n string) error {
	if !namePattern.MatchString(n) {
		return errors.New("use letters, digits, '.', '_' or '-', at most 63, starting with a letter or digit")
	}
	return nil
}

// checkAddress takes any IP address, or a host name that resolves: real clusters have real
// addresses, but a typo should fail here rather than as an agent that never answers.
func checkAddress(a string) error {
	if a == "" {
		return errors.New("missing: give the host's IP address or a resolvable name")
	}
	if net.ParseIP(a) != nil {
		return nil
	}
	if strings.ContainsAny(a, " :/[]") {
		return errors.New("not an IP address or host name (give no port or brackets; a client's port goes in port)")
	}
	addrs, err := lookupHost(a)
	if err != nil || len(addrs) == 0 {
		return fmt.Errorf("does not resolve (%v): give an IP address or a name this machine resolves", err)
	}
	return nil
}

var cpuPart = regexp.MustCompile(`^([0-9]+)(?:-([0-9]+)(?::([0-9]+))?)?$`)

// checkCPUList checks the syntax of a taskset CPU list ("0", "0-3", "0-1,4", "0-7:2"). The
// CPUs themselves are the remote host's, so they cannot be checked here; taskset refuses
// those the host lacks when the agent starts.
func checkCPUList(list string) error {
	const want = "give a taskset CPU list like 0, 0-1 or 0-1,3"
	if list == "" {
		return errors.New("missing: " + want)
	}
	for _, part := range strings.Split(list, ",") {
		m := cpuPart.FindStringSubmatch(strings.TrimSpace(part))
		if m == nil {
			return fmt.Errorf("%q is no CPU number or range: %s", part, want)
		}
		lo, err1 := strconv.Atoi(m[1])
		hi, err2 := lo, error(nil)
		if m[2] != "" {
			hi, err2 = strconv.Atoi(m[2])
		}
		if err1 != nil || err2 != nil || hi < lo || lo > 8191 || hi > 8191 {
			return fmt.Errorf("%q is no CPU range: %s", part, want)
		}
		if m[3] != "" {
			if s, err := strconv.Atoi(m[3]); err != nil || s < 1 {
				return fmt.Errorf("%q has no valid stride: %s", part, want)
			}
		}
	}
	return nil
}

// checkDestination refuses what ssh would read as an option or what our quoting does not
// carry: an ssh destination is [user@]host or a Host alias.
func checkDestination(d string) error {
	if strings.HasPrefix(d, "-") || strings.ContainsAny(d, " \t\n'\"`$;&|<>()\\") {
		return errors.New("not an ssh destination: give [user@]host or a Host of the ssh_config")
	}
	return nil
}

// lineKey locates a key: section "" for top level, "server", or "client" with its index.
type lineKey struct {
	section string
	index   int
	key     string // "" for the table header itself
}

// keyLines finds on which line each key of the file is, for error messages: the TOML
// decoder keeps no positions of values. It reads the plain layout hosts files use (one
// key per line under [server] and [[client]] headers); keys it misses get no line number.
func keyLines(data string) map[lineKey]int {
	out := map[lineKey]int{}
	section, index := "", 0
	clients := -1
	for i, line := range strings.Split(data, "\n") {
		l := strings.TrimSpace(line)
		if c := strings.Index(l, "#"); c == 0 {
			continue
		}
		switch {
		case strings.HasPrefix(l, "[["):
			name := strings.TrimSpace(strings.Trim(l[:strings.Index(l+"]]", "]]")], "[ "))
			section = name
			if name == "client" {
				clients++
				index = clients
			} else {
				index = 0
			}
			out[lineKey{section, index, ""}] = i + 1
		case strings.HasPrefix(l, "["):
			end := strings.Index(l, "]")
			if end < 0 {
				continue
			}
			section, index = strings.TrimSpace(l[1:end]), 0
			out[lineKey{section, index, ""}] = i + 1
		default:
			k, _, ok := strings.Cut(l, "=")
			if !ok {
				continue
			}
			k = strings.Trim(strings.TrimSpace(k), `"'`)
			if _, seen := out[lineKey{section, index, k}]; !seen {
				out[lineKey{section, index, k}] = i + 1
			}
		}
	}
	return out
}
