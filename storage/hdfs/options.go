package hdfs

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"
	"github.com/colinmarc/hdfs/v2/hadoopconf"
)

// The defaults of Options' sizes and timeouts.
const (
	// DefaultPort is the namenode RPC port of an authority without one
	// (Hadoop's default for fs.defaultFS and dfs.namenode.rpc-address).
	DefaultPort = 8020
	// DefaultClients is the number of namenode connections an FS opens at
	// most.
	DefaultClients = 4
	// DefaultDialTimeout bounds each TCP connect to a namenode or datanode.
	DefaultDialTimeout = 30 * time.Second
	// DefaultIOTimeout bounds each read from and each write to a datanode.
	DefaultIOTimeout = 5 * time.Minute
	// DefaultReadBlockSize is the unit in which an opened file is read and
	// cached.
	DefaultReadBlockSize = 4 << 20
	// DefaultReadCacheBlocks is how many read blocks an opened file keeps.
	DefaultReadCacheBlocks = 4
	// DefaultFooterSize is how much of the end of a file Open reads at
	// once (a Parquet file's footer and its length).
	DefaultFooterSize = 64 << 10
	// DefaultWriteBufferSize is the buffer in front of each file being
	// written.
	DefaultWriteBufferSize = 256 << 10
	// DefaultCloseRetryTimeout bounds how long closing a written file waits
	// for the namenode to find its last block replicated.
	DefaultCloseRetryTimeout = 60 * time.Second
)

// Environment variables read, besides Hadoop's and Kerberos' own
// (HADOOP_CONF_DIR, HADOOP_HOME, HADOOP_USER_NAME, KRB5CCNAME, KRB5_CONFIG).
const (
	// EnvKeytab names a keytab to log in to Kerberos with, instead of a
	// credential cache (Options.Keytab).
	EnvKeytab = "TRAWL_HDFS_KEYTAB"
	// EnvPrincipal is the principal to take from the keytab, "name@REALM"
	// or "name" (Options.Principal).
	EnvPrincipal = "TRAWL_HDFS_PRINCIPAL"
)

// Options configures New. The zero value reads everything from the
// environment and Hadoop's configuration files, as the hdfs command does.
type Options struct {
	// Env is the environment, as KEY=VALUE strings, in which the variables
	// this package reads are looked up; nil means the process's
	// environment.
	Env []string

	// ConfDir is the directory of core-site.xml and hdfs-site.xml. Empty
	// means $HADOOP_CONF_DIR, else $HADOOP_HOME/etc/hadoop, else
	// $HADOOP_HOME/conf; with none of them there is no configuration file
	// and the authority must name a namenode.
	ConfDir string
	// Conf holds Hadoop properties set on top of those of the files, e.g.
	// {"hadoop.security.authentication": "kerberos"}.
	Conf map[string]string

	// User is the HDFS user without Kerberos. Empty means
	// $HADOOP_USER_NAME, else the operating-system user. With Kerberos the
	// user is the principal's, and User is ignored.
	User string

	// Keytab is a keytab file to log in to Kerberos with; empty means
	// $TRAWL_HDFS_KEYTAB, and with neither the credential cache is used.
	Keytab string
	// Principal is the keytab's principal to log in as, "name@REALM" or
	// "name" (the realm is then krb5.conf's default_realm); empty means
	// $TRAWL_HDFS_PRINCIPAL, else the keytab's first entry.
	Principal string
	// CCache is the Kerberos credential cache file (what kinit writes).
	// Empty means $KRB5CCNAME (FILE: caches only), else
	// /tmp/krb5cc_<uid>.
	CCache string
	// Krb5Conf is the Kerberos configuration file. Empty means the first
	// file of $KRB5_CONFIG, else /etc/krb5.conf.
	Krb5Conf string

	// Clients is how many connections to the namenode the FS opens at most
	// (each is used by one goroutine at a time); 0 means DefaultClients.
	// The first connects in New, the others when goroutines would wait.
	Clients int
	// DialTimeout bounds each TCP connect; 0 means DefaultDialTimeout.
	DialTimeout time.Duration
	// IOTimeout bounds each read of a block of a file, each write of a
	// buffer to the datanodes and each close of a written file; 0 means
	// DefaultIOTimeout, negative means no limit. Between calls no deadline
	// is left on the connection (an idle writer's heartbeats must reach
	// the datanodes). Namenode calls have no limit (the library has none;
	// TCP keep-alives detect a dead namenode).
	IOTimeout time.Duration
	// ReadBlockSize is the size of the aligned blocks in which an opened
	// file is read and cached; 0 means DefaultReadBlockSize.
	ReadBlockSize int
	// ReadCacheBlocks is how many blocks an opened file keeps (least
	// recently used first out); 0 means DefaultReadCacheBlocks.
	ReadCacheBlocks int
	// FooterSize is how much of the end of a file Open reads and keeps;
	// 0 means DefaultFooterSize, negative means none.
	FooterSize int
	// WriteBufferSize is the buffer in front of each written file; 0 means
	// DefaultWriteBufferSize.
	WriteBufferSize int
	// CloseRetryTimeout bounds how long Close of a written file retries
	// while the namenode reports its last block as not yet replicated;
	// 0 means DefaultCloseRetryTimeout.
	CloseRetryTimeout time.Duration

	// Logger receives connection events, retries and fallbacks; nil means
	// slog.Default() at the time of New.
	Logger *slog.Logger
}

// settings is Options resolved against the environment and the Hadoop
// configuration: everything New needs to connect.
type settings struct {
	// authority is the URI authority the FS serves (fs.defaultFS's when
	// New was given none).
	authority string
	// nameservice is the HA or federated nameservice the authority named,
	// if it named one.
	nameservice string
	// confDir is where the configuration was read from ("" for none).
	confDir string
	// client holds the library's options: namenode addresses, user,
	// datanode settings. It starts from ClientOptionsFromConf, the only
	// way to set the library's unexported datanode SASL switch as the
	// Java client does; KerberosClient is left nil here.
	client   gohdfs.ClientOptions
	kerberos *kerberosSettings

	clients           int
	dialTimeout       time.Duration
	ioTimeout         time.Duration
	readBlockSize     int
	readCacheBlocks   int
	footerSize        int
	writeBufferSize   int
	closeRetryTimeout time.Duration
	log               *slog.Logger
}

// kerberosSettings says where Kerberos credentials come from.
type kerberosSettings struct {
	krb5Conf  string
	keytab    string // a keytab file, or "" for the credential cache
	principal string // with keytab: "name@REALM", "name" or "" (first entry)
	ccache    string // without keytab: the credential cache file
	// spn is the namenode's service principal without its realm, e.g.
	// "nn/_HOST" (the library puts each namenode's host for _HOST).
	spn string
}

// getenvFunc returns a lookup in env, or os.Getenv for a nil env. The last
// assignment of a name wins, as in exec.Cmd.
func getenvFunc(env []string) func(string) string {
	if env == nil {
		return os.Getenv
	}
	return func(name string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
				return v
			}
		}
		return ""
	}
}

// resolve turns an authority and Options into settings. It reads the
// configuration files and the environment but connects nowhere.
func resolve(authority string, o Options) (*settings, error) {
	getenv := getenvFunc(o.Env)
	st := &settings{log: o.Logger}
	if st.log == nil {
		st.log = slog.Default()
	}
	if err := st.sizes(o); err != nil {
		return nil, err
	}

	conf, dir, err := loadConf(o, getenv, st.log)
	if err != nil {
		return nil, err
	}
	st.confDir = dir

	if authority == "" {
		a, err := defaultAuthority(conf, dir)
		if err != nil {
			return nil, err
		}
		authority = a
	}
	if strings.Contains(authority, "@") {
		return nil, fmt.Errorf("authority %q: user information in an hdfs URI is not supported (set HADOOP_USER_NAME)", authority)
	}
	addrs, ns, err := namenodes(conf, authority)
	if err != nil {
		return nil, err
	}
	st.authority, st.nameservice = authority, ns

	st.client = gohdfs.ClientOptionsFromConf(conf)
	st.client.Addresses = addrs
	st.client.KerberosClient = nil
	if strings.EqualFold(strings.TrimSpace(conf["hadoop.security.authentication"]), "kerberos") {
		k, err := kerberosFrom(o, conf, getenv, st.client.KerberosServicePrincipleName)
		if err != nil {
			return nil, err
		}
		st.kerberos = k
	} else {
		u, err := userFrom(o, getenv)
		if err != nil {
			return nil, err
		}
		st.client.User = u
	}
	return st, nil
}

// sizes copies and checks Options' sizes and timeouts.
func (st *settings) sizes(o Options) error {
	pick := func(name string, v, def int) (int, error) {
		if v < 0 {
			return 0, fmt.Errorf("options: %s is negative (%d)", name, v)
		}
		return orDefault(v, def, 0), nil
	}
	var err error
	if st.clients, err = pick("Clients", o.Clients, DefaultClients); err != nil {
		return err
	}
	if st.readBlockSize, err = pick("ReadBlockSize", o.ReadBlockSize, DefaultReadBlockSize); err != nil {
		return err
	}
	if st.readCacheBlocks, err = pick("ReadCacheBlocks", o.ReadCacheBlocks, DefaultReadCacheBlocks); err != nil {
		return err
	}
	if st.writeBufferSize, err = pick("WriteBufferSize", o.WriteBufferSize, DefaultWriteBufferSize); err != nil {
		return err
	}
	st.footerSize = orDefault(o.FooterSize, DefaultFooterSize, 0)
	st.dialTimeout = orDefault(o.DialTimeout, DefaultDialTimeout, DefaultDialTimeout)
	st.ioTimeout = orDefault(o.IOTimeout, DefaultIOTimeout, 0)
	st.closeRetryTimeout = orDefault(o.CloseRetryTimeout, DefaultCloseRetryTimeout, DefaultCloseRetryTimeout)
	return nil
}

// orDefault is v if it is positive, def if it is 0 and neg if it is
// negative.
func orDefault[T int | time.Duration](v, def, neg T) T {
	switch {
	case v < 0:
		return neg
	case v == 0:
		return def
	}
	return v
}

// loadConf reads the Hadoop configuration: from o.ConfDir, else
// $HADOOP_CONF_DIR, else $HADOOP_HOME/etc/hadoop (Hadoop 2 and later),
// else $HADOOP_HOME/conf (older layouts, the only one hadoopconf's
// LoadFromEnvironment knows). o.Conf is laid over it. It returns the
// directory read ("" if none).
func loadConf(o Options, getenv func(string) string, log *slog.Logger) (hadoopconf.HadoopConf, string, error) {
	type candidate struct{ dir, from string }
	var dirs []candidate
	switch {
	case o.ConfDir != "":
		dirs = append(dirs, candidate{o.ConfDir, "Options.ConfDir"})
	case getenv("HADOOP_CONF_DIR") != "":
		dirs = append(dirs, candidate{getenv("HADOOP_CONF_DIR"), "HADOOP_CONF_DIR"})
	}
	if home := getenv("HADOOP_HOME"); home != "" && o.ConfDir == "" {
		dirs = append(dirs,
			candidate{filepath.Join(home, "etc", "hadoop"), "HADOOP_HOME"},
			candidate{filepath.Join(home, "conf"), "HADOOP_HOME"})
	}
	var conf hadoopconf.HadoopConf
	var dir string
	for i, c := range dirs {
		cf, err := hadoopconf.Load(c.dir)
		if err != nil {
			return nil, "", fmt.Errorf("read the Hadoop configuration in %s (from %s): %w", c.dir, c.from, err)
		}
		if cf != nil {
			conf, dir = cf, c.dir
			break
		}
		if i == 0 && c.from != "HADOOP_HOME" {
			if c.from == "Options.ConfDir" {
				return nil, "", fmt.Errorf("no core-site.xml, hdfs-site.xml or mapred-site.xml in %s (Options.ConfDir)", c.dir)
			}
			log.Warn("hdfs: no Hadoop configuration file in HADOOP_CONF_DIR", "dir", c.dir)
		}
	}
	if len(o.Conf) > 0 {
		if conf == nil {
			conf = make(hadoopconf.HadoopConf, len(o.Conf))
		}
		for k, v := range o.Conf {
			conf[k] = v
		}
	}
	return conf, dir, nil
}

// defaultAuthority returns the authority of fs.defaultFS (or the older
// fs.default.name).
func defaultAuthority(conf hadoopconf.HadoopConf, dir string) (string, error) {
	v := strings.TrimSpace(conf["fs.defaultFS"])
	key := "fs.defaultFS"
	if v == "" {
		v, key = strings.TrimSpace(conf["fs.default.name"]), "fs.default.name"
	}
	if v == "" {
		where := "no Hadoop configuration was found (set HADOOP_CONF_DIR)"
		if dir != "" {
			where = "the configuration in " + dir + " sets no fs.defaultFS"
		}
		return "", fmt.Errorf("an hdfs URI without a namenode (hdfs:///path) needs fs.defaultFS, but %s; name the namenode or nameservice: hdfs://host:port/path", where)
	}
	u, err := url.Parse(v)
	if err != nil {
		return "", fmt.Errorf("%s %q: %w", key, v, err)
	}
	if !strings.EqualFold(u.Scheme, "hdfs") {
		return "", fmt.Errorf("%s is %q: only an hdfs:// default file system is supported (not viewfs, webhdfs or others)", key, v)
	}
	if u.Host == "" {
		return "", fmt.Errorf("%s %q names no namenode or nameservice", key, v)
	}
	return u.Host, nil
}

// namenodes returns the RPC addresses of the namenodes an authority names,
// and the nameservice if it named one:
//
//   - "host:port", or several separated by commas: those addresses;
//   - a nameservice with dfs.ha.namenodes.<ns> = nn1,nn2: the addresses
//     dfs.namenode.rpc-address.<ns>.nn1, ... in that order (the library
//     fails over from one to the next when a namenode is in standby);
//   - a nameservice with only dfs.namenode.rpc-address.<ns> (federation
//     without HA): that address;
//   - any other name: that host at DefaultPort.
func namenodes(conf hadoopconf.HadoopConf, authority string) ([]string, string, error) {
	if strings.Contains(authority, ",") {
		var addrs []string
		for _, a := range strings.Split(authority, ",") {
			a = strings.TrimSpace(a)
			if a == "" {
				return nil, "", fmt.Errorf("authority %q: empty namenode address", authority)
			}
			addrs = append(addrs, withPort(a))
		}
		return addrs, "", nil
	}
	if authority == "" {
		return nil, "", errors.New("empty authority")
	}
	if _, _, err := net.SplitHostPort(authority); err == nil {
		return []string{withPort(authority)}, "", nil
	}
	if ids := strings.TrimSpace(conf["dfs.ha.namenodes."+authority]); ids != "" {
		var addrs []string
		for _, id := range strings.Split(ids, ",") {
			id = strings.TrimSpace(id)
			if id == "" {
				continue
			}
			key := "dfs.namenode.rpc-address." + authority + "." + id
			a := strings.TrimSpace(conf[key])
			if a == "" {
				return nil, "", fmt.Errorf("nameservice %s: namenode %s has no %s", authority, id, key)
			}
			addrs = append(addrs, withPort(a))
		}
		if len(addrs) == 0 {
			return nil, "", fmt.Errorf("nameservice %s: dfs.ha.namenodes.%s lists no namenode", authority, authority)
		}
		return addrs, authority, nil
	}
	if a := strings.TrimSpace(conf["dfs.namenode.rpc-address."+authority]); a != "" {
		return []string{withPort(a)}, authority, nil
	}
	for _, ns := range strings.Split(conf["dfs.nameservices"], ",") {
		if strings.TrimSpace(ns) == authority {
			return nil, "", fmt.Errorf("nameservice %s is in dfs.nameservices but has neither dfs.ha.namenodes.%s nor dfs.namenode.rpc-address.%s", authority, authority, authority)
		}
	}
	return []string{withPort(authority)}, "", nil
}

// withPort adds DefaultPort to an address without a port.
func withPort(a string) string {
	if host, port, err := net.SplitHostPort(a); err == nil {
		if port == "" {
			port = strconv.Itoa(DefaultPort)
		}
		return net.JoinHostPort(host, port)
	}
	host := strings.TrimSuffix(strings.TrimPrefix(a, "["), "]")
	return net.JoinHostPort(host, strconv.Itoa(DefaultPort))
}

// userFrom returns the HDFS user of simple authentication.
func userFrom(o Options, getenv func(string) string) (string, error) {
	if o.User != "" {
		return o.User, nil
	}
	if u := getenv("HADOOP_USER_NAME"); u != "" {
		return u, nil
	}
	u, err := user.Current()
	if err == nil && u.Username != "" {
		return u.Username, nil
	}
	if name := getenv("USER"); name != "" {
		return name, nil
	}
	return "", fmt.Errorf("no HDFS user: set HADOOP_USER_NAME (the operating-system user is unknown: %v)", err)
}

// kerberosFrom resolves where Kerberos credentials come from.
func kerberosFrom(o Options, conf hadoopconf.HadoopConf, getenv func(string) string, spn string) (*kerberosSettings, error) {
	if spn == "" {
		return nil, errors.New("hadoop.security.authentication is kerberos but dfs.namenode.kerberos.principal is not set (e.g. nn/_HOST@EXAMPLE.COM)")
	}
	k := &kerberosSettings{spn: spn}

	k.krb5Conf = o.Krb5Conf
	if k.krb5Conf == "" {
		// MIT Kerberos takes a colon-separated list; the first file is used.
		if v := getenv("KRB5_CONFIG"); v != "" {
			k.krb5Conf, _, _ = strings.Cut(v, ":")
		}
	}
	if k.krb5Conf == "" {
		k.krb5Conf = "/etc/krb5.conf"
	}

	k.keytab, k.principal = o.Keytab, o.Principal
	if k.keytab == "" {
		k.keytab = getenv(EnvKeytab)
	}
	if k.principal == "" {
		k.principal = getenv(EnvPrincipal)
	}
	if k.keytab != "" {
		return k, nil
	}
	if k.principal != "" {
		return nil, fmt.Errorf("a Kerberos principal (%s) is set without a keytab (%s); with a credential cache the principal is the cache's", EnvPrincipal, EnvKeytab)
	}

	k.ccache = o.CCache
	if k.ccache == "" {
		v := getenv("KRB5CCNAME")
		switch {
		case v == "":
			k.ccache = fmt.Sprintf("/tmp/krb5cc_%d", os.Getuid())
		case strings.HasPrefix(v, "FILE:"):
			k.ccache = strings.TrimPrefix(v, "FILE:")
		case strings.Contains(v, ":") && !strings.HasPrefix(v, "/"):
			typ, _, _ := strings.Cut(v, ":")
			return nil, fmt.Errorf("KRB5CCNAME=%s: only FILE credential caches are supported, not %s (run kinit -c FILE:/tmp/krb5cc_%d, or use a keytab with %s)", v, typ, os.Getuid(), EnvKeytab)
		default:
			k.ccache = v
		}
	}
	return k, nil
}

// describe names where the FS connects and as whom, for messages.
func (st *settings) describe() string {
	var b strings.Builder
	b.WriteString("hdfs://" + st.authority)
	if st.nameservice != "" || len(st.client.Addresses) > 1 || st.client.Addresses[0] != st.authority {
		b.WriteString(" (" + strings.Join(st.client.Addresses, ", ") + ")")
	}
	switch {
	case st.kerberos != nil && st.kerberos.keytab != "":
		fmt.Fprintf(&b, " with Kerberos keytab %s", st.kerberos.keytab)
	case st.kerberos != nil:
		fmt.Fprintf(&b, " with Kerberos credential cache %s", st.kerberos.ccache)
	default:
		fmt.Fprintf(&b, " as user %s", st.client.User)
	}
	return b.String()
}
