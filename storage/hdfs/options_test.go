package hdfs

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2/hadoopconf"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/trawl/trawl/storage"
)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// haConf is the hdfs-site.xml of a cluster with an HA nameservice, a
// federated nameservice without HA, and datanode settings.
const haConf = `<?xml version="1.0"?>
<configuration>
  <property><name>dfs.nameservices</name><value>prod,archive,broken</value></property>
  <property><name>dfs.ha.namenodes.prod</name><value>nn1, nn2</value></property>
  <property><name>dfs.namenode.rpc-address.prod.nn1</name><value>nn1.example.com:8020</value></property>
  <property><name>dfs.namenode.rpc-address.prod.nn2</name><value>nn2.example.com:8020</value></property>
  <property><name>dfs.namenode.rpc-address.archive</name><value>arch.example.com:9000</value></property>
  <property><name>dfs.client.use.datanode.hostname</name><value>true</value></property>
  <property><name>dfs.data.transfer.protection</name><value>authentication,integrity</value></property>
</configuration>
`

func coreSite(props map[string]string) string {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<configuration>\n")
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "  <property><name>%s</name><value>%s</value></property>\n", k, props[k])
	}
	b.WriteString("</configuration>\n")
	return b.String()
}

// confDir writes a Hadoop configuration directory.
func confDir(t *testing.T, dir string, core map[string]string, hdfsSite string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if core != nil {
		if err := os.WriteFile(filepath.Join(dir, "core-site.xml"), []byte(coreSite(core)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if hdfsSite != "" {
		if err := os.WriteFile(filepath.Join(dir, "hdfs-site.xml"), []byte(hdfsSite), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestNamenodes(t *testing.T) {
	conf := hadoopconf.HadoopConf{
		"dfs.nameservices":                   "prod,archive,broken,half",
		"dfs.ha.namenodes.prod":              "nn1, nn2",
		"dfs.namenode.rpc-address.prod.nn1":  "nn1.example.com:8020",
		"dfs.namenode.rpc-address.prod.nn2":  "nn2.example.com:8021",
		"dfs.namenode.rpc-address.archive":   "arch.example.com",
		"dfs.ha.namenodes.half":              "a,b",
		"dfs.namenode.rpc-address.half.a":    "a.example.com:8020",
		"dfs.namenode.rpc-address.other.nn1": "ignored:1",
	}
	cases := []struct {
		authority string
		want      []string
		ns        string
		err       string
	}{
		{"nn.example.com:9000", []string{"nn.example.com:9000"}, "", ""},
		{"nn.example.com", []string{"nn.example.com:8020"}, "", ""},
		{"nn.example.com:", []string{"nn.example.com:8020"}, "", ""},
		{"[::1]:9000", []string{"[::1]:9000"}, "", ""},
		{"[::1]", []string{"[::1]:8020"}, "", ""},
		{"a:1,b", []string{"a:1", "b:8020"}, "", ""},
		{"prod", []string{"nn1.example.com:8020", "nn2.example.com:8021"}, "prod", ""},
		{"archive", []string{"arch.example.com:8020"}, "archive", ""},
		{"broken", nil, "", "has neither dfs.ha.namenodes.broken nor dfs.namenode.rpc-address.broken"},
		{"half", nil, "", "namenode b has no dfs.namenode.rpc-address.half.b"},
		{"a:1,,b", nil, "", "empty namenode address"},
	}
	for _, c := range cases {
		got, ns, err := namenodes(conf, c.authority)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("namenodes(%q) error = %v; want %q", c.authority, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) || ns != c.ns {
			t.Errorf("namenodes(%q) = %q, %q, %v; want %q, %q", c.authority, got, ns, err, c.want, c.ns)
		}
	}
}

func TestDefaultAuthority(t *testing.T) {
	cases := []struct {
		conf hadoopconf.HadoopConf
		want string
		err  string
	}{
		{hadoopconf.HadoopConf{"fs.defaultFS": "hdfs://prod"}, "prod", ""},
		{hadoopconf.HadoopConf{"fs.defaultFS": "hdfs://nn:9000/"}, "nn:9000", ""},
		{hadoopconf.HadoopConf{"fs.default.name": "hdfs://old:8020"}, "old:8020", ""},
		{hadoopconf.HadoopConf{"fs.defaultFS": "viewfs://cluster"}, "", "only an hdfs:// default file system"},
		{hadoopconf.HadoopConf{"fs.defaultFS": "file:///"}, "", "only an hdfs:// default file system"},
		{hadoopconf.HadoopConf{"fs.defaultFS": "hdfs:///x"}, "", "names no namenode"},
		{hadoopconf.HadoopConf{}, "", "sets no fs.defaultFS"},
		{nil, "", "no Hadoop configuration was found"},
	}
	for _, c := range cases {
		dir := "/etc/hadoop"
		if c.conf == nil {
			dir = ""
		}
		got, err := defaultAuthority(c.conf, dir)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("defaultAuthority(%v) error = %v; want %q", c.conf, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("defaultAuthority(%v) = %q, %v; want %q", c.conf, got, err, c.want)
		}
	}
}

func TestLoadConfPrecedence(t *testing.T) {
	base := t.TempDir()
	confA := confDir(t, filepath.Join(base, "a"), map[string]string{"fs.defaultFS": "hdfs://a"}, "")
	home := filepath.Join(base, "home")
	confDir(t, filepath.Join(home, "etc", "hadoop"), map[string]string{"fs.defaultFS": "hdfs://etc"}, "")
	oldHome := filepath.Join(base, "oldhome")
	confDir(t, filepath.Join(oldHome, "conf"), map[string]string{"fs.defaultFS": "hdfs://conf"}, "")
	empty := filepath.Join(base, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		o    Options
		want string // fs.defaultFS, "" for no configuration
		err  string
	}{
		{"ConfDir first", Options{ConfDir: confA, Env: []string{"HADOOP_CONF_DIR=" + empty, "HADOOP_HOME=" + home}}, "hdfs://a", ""},
		{"HADOOP_CONF_DIR", Options{Env: []string{"HADOOP_CONF_DIR=" + confA, "HADOOP_HOME=" + home}}, "hdfs://a", ""},
		{"HADOOP_HOME/etc/hadoop", Options{Env: []string{"HADOOP_HOME=" + home}}, "hdfs://etc", ""},
		{"HADOOP_HOME/conf", Options{Env: []string{"HADOOP_HOME=" + oldHome}}, "hdfs://conf", ""},
		{"empty HADOOP_CONF_DIR falls through", Options{Env: []string{"HADOOP_CONF_DIR=" + empty, "HADOOP_HOME=" + home}}, "hdfs://etc", ""},
		{"nothing", Options{Env: []string{}}, "", ""},
		{"last assignment wins", Options{Env: []string{"HADOOP_CONF_DIR=" + empty, "HADOOP_CONF_DIR=" + confA}}, "hdfs://a", ""},
		{"Conf on top", Options{Env: []string{"HADOOP_CONF_DIR=" + confA}, Conf: map[string]string{"fs.defaultFS": "hdfs://over"}}, "hdfs://over", ""},
		{"ConfDir without files", Options{ConfDir: empty}, "", "no core-site.xml"},
	}
	for _, c := range cases {
		conf, _, err := loadConf(c.o, getenvFunc(c.o.Env), discardLogger())
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v; want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || conf["fs.defaultFS"] != c.want {
			t.Errorf("%s: fs.defaultFS = %q, %v; want %q", c.name, conf["fs.defaultFS"], err, c.want)
		}
	}

	bad := confDir(t, filepath.Join(base, "bad"), nil, "<configuration><property>")
	if _, _, err := loadConf(Options{ConfDir: bad}, getenvFunc(nil), discardLogger()); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("malformed hdfs-site.xml: %v", err)
	}
}

func TestResolveHA(t *testing.T) {
	dir := confDir(t, filepath.Join(t.TempDir(), "conf"), map[string]string{"fs.defaultFS": "hdfs://prod"}, haConf)
	st, err := resolve("", Options{Env: []string{"HADOOP_CONF_DIR=" + dir, "HADOOP_USER_NAME=crawler"}})
	if err != nil {
		t.Fatal(err)
	}
	if st.authority != "prod" || st.nameservice != "prod" || !slices.Equal(st.client.Addresses, []string{"nn1.example.com:8020", "nn2.example.com:8020"}) {
		t.Errorf("resolved %q (%q) to %q", st.authority, st.nameservice, st.client.Addresses)
	}
	if st.client.User != "crawler" || st.kerberos != nil || st.client.KerberosClient != nil {
		t.Errorf("user %q, kerberos %v", st.client.User, st.kerberos)
	}
	if !st.client.UseDatanodeHostname || st.client.DataTransferProtection != "integrity" {
		t.Errorf("datanode options: hostname %v, protection %q", st.client.UseDatanodeHostname, st.client.DataTransferProtection)
	}
	if got, want := st.describe(), "hdfs://prod (nn1.example.com:8020, nn2.example.com:8020) as user crawler"; got != want {
		t.Errorf("describe = %q; want %q", got, want)
	}
	st, err = resolve("archive", Options{Env: []string{"HADOOP_CONF_DIR=" + dir}, User: "u"})
	if err != nil || !slices.Equal(st.client.Addresses, []string{"arch.example.com:9000"}) || st.client.User != "u" {
		t.Errorf("archive: %v, %v", st, err)
	}
	st, err = resolve("nn.example.com:9000", Options{Env: []string{"HADOOP_USER_NAME=x"}})
	if err != nil || !slices.Equal(st.client.Addresses, []string{"nn.example.com:9000"}) {
		t.Fatalf("no configuration: %v", err)
	}
	if got := st.describe(); got != "hdfs://nn.example.com:9000 as user x" {
		t.Errorf("describe = %q", got)
	}
	if _, err := resolve("user@nn:8020", Options{Env: []string{}}); err == nil || !strings.Contains(err.Error(), "HADOOP_USER_NAME") {
		t.Errorf("user info in the authority: %v", err)
	}
}

func TestResolveOptions(t *testing.T) {
	st, err := resolve("nn:1", Options{Env: []string{"HADOOP_USER_NAME=x"}})
	if err != nil {
		t.Fatal(err)
	}
	if st.clients != DefaultClients || st.readBlockSize != DefaultReadBlockSize || st.readCacheBlocks != DefaultReadCacheBlocks ||
		st.footerSize != DefaultFooterSize || st.writeBufferSize != DefaultWriteBufferSize ||
		st.dialTimeout != DefaultDialTimeout || st.ioTimeout != DefaultIOTimeout || st.closeRetryTimeout != DefaultCloseRetryTimeout {
		t.Errorf("defaults: %+v", st)
	}
	st, err = resolve("nn:1", Options{Env: []string{"HADOOP_USER_NAME=x"}, IOTimeout: -1, FooterSize: -1})
	if err != nil || st.ioTimeout != 0 || st.footerSize != 0 {
		t.Errorf("negative IOTimeout and FooterSize: %v %v", st, err)
	}
	for _, o := range []Options{{Clients: -1}, {ReadBlockSize: -1}, {ReadCacheBlocks: -2}, {WriteBufferSize: -3}} {
		if _, err := resolve("nn:1", o); err == nil || !strings.Contains(err.Error(), "negative") {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

func TestUser(t *testing.T) {
	if u, _ := userFrom(Options{User: "opt"}, getenvFunc([]string{"HADOOP_USER_NAME=env"})); u != "opt" {
		t.Errorf("Options.User: %q", u)
	}
	if u, _ := userFrom(Options{}, getenvFunc([]string{"HADOOP_USER_NAME=env"})); u != "env" {
		t.Errorf("HADOOP_USER_NAME: %q", u)
	}
	u, err := userFrom(Options{}, getenvFunc([]string{}))
	if err != nil || u == "" {
		t.Errorf("operating-system user: %q, %v", u, err)
	}
}

func TestKerberosSettings(t *testing.T) {
	conf := hadoopconf.HadoopConf{
		"hadoop.security.authentication":  "Kerberos",
		"dfs.namenode.kerberos.principal": "nn/_HOST@EXAMPLE.COM",
	}
	uid := os.Getuid()
	cases := []struct {
		name string
		o    Options
		env  []string
		want kerberosSettings
		err  string
	}{
		{"defaults", Options{}, []string{}, kerberosSettings{krb5Conf: "/etc/krb5.conf", ccache: fmt.Sprintf("/tmp/krb5cc_%d", uid), spn: "nn/_HOST"}, ""},
		{"KRB5CCNAME FILE:", Options{}, []string{"KRB5CCNAME=FILE:/run/cc", "KRB5_CONFIG=/a/krb5.conf:/b/krb5.conf"},
			kerberosSettings{krb5Conf: "/a/krb5.conf", ccache: "/run/cc", spn: "nn/_HOST"}, ""},
		{"KRB5CCNAME path", Options{}, []string{"KRB5CCNAME=/run/cc"}, kerberosSettings{krb5Conf: "/etc/krb5.conf", ccache: "/run/cc", spn: "nn/_HOST"}, ""},
		{"KRB5CCNAME KEYRING:", Options{}, []string{"KRB5CCNAME=KEYRING:persistent:0"}, kerberosSettings{}, "only FILE credential caches"},
		{"keytab env", Options{}, []string{EnvKeytab + "=/etc/trawl.keytab", EnvPrincipal + "=trawl@EXAMPLE.COM"},
			kerberosSettings{krb5Conf: "/etc/krb5.conf", keytab: "/etc/trawl.keytab", principal: "trawl@EXAMPLE.COM", spn: "nn/_HOST"}, ""},
		{"keytab options", Options{Keytab: "/k", Principal: "p", Krb5Conf: "/krb5.conf", CCache: "/ignored"}, []string{EnvKeytab + "=/env"},
			kerberosSettings{krb5Conf: "/krb5.conf", keytab: "/k", principal: "p", spn: "nn/_HOST"}, ""},
		{"principal without keytab", Options{}, []string{EnvPrincipal + "=trawl"}, kerberosSettings{}, "without a keytab"},
		{"CCache option", Options{CCache: "/cc"}, []string{"KRB5CCNAME=/env"}, kerberosSettings{krb5Conf: "/etc/krb5.conf", ccache: "/cc", spn: "nn/_HOST"}, ""},
	}
	for _, c := range cases {
		o := c.o
		o.Env = c.env
		o.Conf = conf
		st, err := resolve("nn:8020", o)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v; want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if *st.kerberos != c.want {
			t.Errorf("%s: %+v; want %+v", c.name, *st.kerberos, c.want)
		}
	}
	_, err := resolve("nn:8020", Options{Env: []string{}, Conf: map[string]string{"hadoop.security.authentication": "kerberos"}})
	if err == nil || !strings.Contains(err.Error(), "dfs.namenode.kerberos.principal") {
		t.Errorf("kerberos without a namenode principal: %v", err)
	}
}

const krb5Conf = `[libdefaults]
  default_realm = EXAMPLE.COM
[realms]
  EXAMPLE.COM = {
    kdc = 127.0.0.1:88
  }
`

// TestKerberosClient builds clients from a keytab and from a missing
// credential cache; no KDC is contacted.
func TestKerberosClient(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "krb5.conf")
	if err := os.WriteFile(conf, []byte(krb5Conf), 0o644); err != nil {
		t.Fatal(err)
	}
	kt := keytab.New()
	if err := kt.AddEntry("trawl/crawler.example.com", "CORP.EXAMPLE.COM", "secret", time.Now(), 1, etypeID.AES256_CTS_HMAC_SHA1_96); err != nil {
		t.Fatal(err)
	}
	b, err := kt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	ktPath := filepath.Join(dir, "trawl.keytab")
	if err := os.WriteFile(ktPath, b, 0o600); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct{ principal, user, realm string }{
		{"", "trawl/crawler.example.com", "CORP.EXAMPLE.COM"}, // the keytab's first entry
		{"other@OTHER.ORG", "other", "OTHER.ORG"},
		{"bare", "bare", "EXAMPLE.COM"}, // krb5.conf's default_realm
	} {
		cl, err := newKerberosClient(&kerberosSettings{krb5Conf: conf, keytab: ktPath, principal: c.principal, spn: "nn/_HOST"})
		if err != nil {
			t.Fatalf("principal %q: %v", c.principal, err)
		}
		if cl.Credentials.UserName() != c.user || cl.Credentials.Realm() != c.realm || !cl.Credentials.HasKeytab() {
			t.Errorf("principal %q: %s@%s", c.principal, cl.Credentials.UserName(), cl.Credentials.Realm())
		}
	}

	_, err = newKerberosClient(&kerberosSettings{krb5Conf: conf, ccache: filepath.Join(dir, "missing")})
	if err == nil || !strings.Contains(err.Error(), "run kinit") {
		t.Errorf("missing credential cache: %v", err)
	}
	_, err = newKerberosClient(&kerberosSettings{krb5Conf: filepath.Join(dir, "nope.conf"), ccache: "/x"})
	if err == nil || !strings.Contains(err.Error(), "KRB5_CONFIG") {
		t.Errorf("missing krb5.conf: %v", err)
	}
	_, err = newKerberosClient(&kerberosSettings{krb5Conf: conf, keytab: filepath.Join(dir, "nope.keytab")})
	if err == nil || !strings.Contains(err.Error(), "nope.keytab") {
		t.Errorf("missing keytab: %v", err)
	}
	if _, _, err := keytabPrincipal(keytab.New(), "", "EXAMPLE.COM"); err == nil {
		t.Error("an empty keytab gave a principal")
	}
	if _, _, err := keytabPrincipal(keytab.New(), "name", ""); err == nil || !strings.Contains(err.Error(), "default_realm") {
		t.Errorf("no realm: %v", err)
	}
}

// TestNewFailsBeforeConnecting: configuration and credential errors come
// from New before anything is dialed.
func TestNewFailsBeforeConnecting(t *testing.T) {
	_, err := New("", Options{Env: []string{}})
	if err == nil || !strings.Contains(err.Error(), "fs.defaultFS") {
		t.Errorf("no authority, no configuration: %v", err)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "krb5.conf")
	if err := os.WriteFile(conf, []byte(krb5Conf), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = New("127.0.0.1:1", Options{
		Env: []string{"KRB5CCNAME=" + filepath.Join(dir, "nocache"), "KRB5_CONFIG=" + conf},
		Conf: map[string]string{
			"hadoop.security.authentication":  "kerberos",
			"dfs.namenode.kerberos.principal": "nn/_HOST@EXAMPLE.COM",
		},
	})
	if err == nil || !strings.Contains(err.Error(), "credential cache") || !strings.Contains(err.Error(), "hdfs://127.0.0.1:1") {
		t.Errorf("kerberos without a cache: %v", err)
	}
}

// TestRegister: the scheme is registered on the resolver; resolving
// opens the FS through New (which here fails before connecting).
func TestRegister(t *testing.T) {
	r := Register(storage.NewResolver(), Options{Env: []string{}})
	if !slices.Contains(r.Schemes(), "hdfs") {
		t.Fatalf("schemes %q", r.Schemes())
	}
	_, _, err := r.Resolve("hdfs:///crawl")
	if err == nil || !strings.Contains(err.Error(), "fs.defaultFS") {
		t.Errorf("Resolve(hdfs:///crawl) = %v", err)
	}
	// A handler's error is not a typed nil FS.
	fsys, err := SchemeFunc(Options{Env: []string{}})("")
	if err == nil || fsys != nil {
		t.Errorf("SchemeFunc = %v, %v", fsys, err)
	}
	if errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a configuration error matches fs.ErrNotExist: %v", err)
	}
}
