package hdfs

import (
	"errors"
	"fmt"
	"strings"

	krbclient "github.com/jcmturner/gokrb5/v8/client"
	krbconfig "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/keytab"
)

// newKerberosClient builds the Kerberos client of k from files only: the
// keytab or the credential cache, and krb5.conf. It contacts no KDC; a
// keytab client logs in when it first needs a ticket (see login).
//
// PA-FX-FAST is disabled: MIT KDCs, the usual ones in front of Hadoop,
// reject it without armor.
func newKerberosClient(k *kerberosSettings) (*krbclient.Client, error) {
	cfg, err := krbconfig.Load(k.krb5Conf)
	if err != nil {
		return nil, fmt.Errorf("kerberos: read %s (set KRB5_CONFIG to another krb5.conf): %w", k.krb5Conf, err)
	}
	if k.keytab != "" {
		kt, err := keytab.Load(k.keytab)
		if err != nil {
			return nil, fmt.Errorf("kerberos: read keytab %s: %w", k.keytab, err)
		}
		name, realm, err := keytabPrincipal(kt, k.principal, cfg.LibDefaults.DefaultRealm)
		if err != nil {
			return nil, fmt.Errorf("kerberos: keytab %s: %w", k.keytab, err)
		}
		return krbclient.NewWithKeytab(name, realm, kt, cfg, krbclient.DisablePAFXFAST(true)), nil
	}
	cc, err := credentials.LoadCCache(k.ccache)
	if err != nil {
		return nil, fmt.Errorf("kerberos: read credential cache %s (run kinit, set KRB5CCNAME, or use a keytab with %s): %w", k.ccache, EnvKeytab, err)
	}
	cl, err := krbclient.NewFromCCache(cc, cfg, krbclient.DisablePAFXFAST(true))
	if err != nil {
		return nil, fmt.Errorf("kerberos: credential cache %s (run kinit again): %w", k.ccache, err)
	}
	return cl, nil
}

// keytabPrincipal returns the name and realm to log in as: those of
// principal ("name@REALM", or "name" in defaultRealm), or, if principal is
// empty, those of the keytab's first entry.
func keytabPrincipal(kt *keytab.Keytab, principal, defaultRealm string) (name, realm string, err error) {
	if principal == "" {
		if len(kt.Entries) == 0 {
			return "", "", errors.New("the keytab has no entries")
		}
		p := kt.Entries[0].Principal
		name, realm = strings.Join(p.Components, "/"), p.Realm
	} else {
		name, realm, _ = strings.Cut(principal, "@")
	}
	if realm == "" {
		realm = defaultRealm
	}
	switch {
	case name == "":
		return "", "", fmt.Errorf("principal %q has no name", principal)
	case realm == "":
		return "", "", fmt.Errorf("principal %q has no realm and krb5.conf sets no default_realm", principal)
	}
	return name, realm, nil
}

// login gets a ticket-granting ticket for a keytab client; a client from a
// credential cache already has one. This contacts the KDC.
func login(cl *krbclient.Client, k *kerberosSettings) error {
	if k.keytab == "" {
		return nil
	}
	if err := cl.Login(); err != nil {
		return fmt.Errorf("kerberos: log in as %s@%s with keytab %s: %w",
			cl.Credentials.UserName(), cl.Credentials.Realm(), k.keytab, err)
	}
	return nil
}
