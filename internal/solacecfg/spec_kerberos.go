package solacecfg

// This file is the spec of auth.kerberos.

import "github.com/redpanda-data/benthos/v4/public/service"

// kerberosField is auth.kerberos.
func kerberosField() *service.ConfigField {
	return service.NewObjectField(FieldAuthKerberos,
		service.NewStringField(FieldKerberosServiceName).
			Description("The first part of the broker's Kerberos service principal, `<service_name>/<host>@REALM`, the host being the one of the URL as written. Empty means the client's default, `solace`.").
			Default("").Example("solace"),
	).Description("Kerberos login for `scheme: kerberos`, through the Solace C library's GSS-API support. The host needs MIT Kerberos's `libgssapi_krb5.so.2` (Debian: `libgssapi-krb5-2`; the library loads it at run time, `SOLCLIENT_GLOBAL_PROP_GSS_KRB_LIB` names another), a `krb5.conf` for the realm (`KRB5_CONFIG` names one elsewhere than `/etc/krb5.conf`), and a ticket-granting ticket in the credentials cache (`KRB5CCNAME`), from `kinit` or kept fresh by `k5start`/`kinit -R`, or a client keytab (`KRB5_CLIENT_KTNAME`), from which the library gets tickets itself. The client re-authenticates on every reconnect with the cache's current tickets.").Advanced()
}
