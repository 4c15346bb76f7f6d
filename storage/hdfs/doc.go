// Package hdfs is HDFS as a storage.FS, on the native Go client
// github.com/colinmarc/hdfs/v2 (v2.4.0): no JVM, no libhdfs, the
// namenode's RPC protocol and the datanodes' transfer protocol spoken
// directly.
//
// # URIs
//
// Register the scheme on a resolver (the trawl command does) and every
// path may be an hdfs URI:
//
//	r := hdfs.Register(storage.NewResolver(), hdfs.Options{})
//	fsys, p, err := r.Resolve("hdfs://nn1.example.com:8020/crawl/crawldb")
//
// The forms of an hdfs URI:
//
//   - hdfs://host:port/path: the namenode at host:port.
//   - hdfs://host/path: the namenode at host, port 8020.
//   - hdfs://nameservice/path: an HA (or federated) nameservice of the
//     Hadoop configuration, resolved to its namenodes (below).
//   - hdfs:///path: the cluster of fs.defaultFS.
//
// The resolver opens one FS per authority and closes it with Close.
//
// # Where the configuration comes from
//
// New reads core-site.xml, hdfs-site.xml and mapred-site.xml from the
// first directory of: Options.ConfDir; $HADOOP_CONF_DIR; $HADOOP_HOME/etc/hadoop;
// $HADOOP_HOME/conf (the parsing is the library's hadoopconf package, which
// does no ${variable} expansion and follows no XInclude). Options.Conf
// sets properties on top. With no configuration at all, an authority that
// names a namenode still works, with simple authentication. The properties
// used are fs.defaultFS, dfs.nameservices, dfs.ha.namenodes.*,
// dfs.namenode.rpc-address.*, hadoop.security.authentication,
// dfs.namenode.kerberos.principal, dfs.client.use.datanode.hostname,
// dfs.data.transfer.protection and dfs.encrypt.data.transfer.
//
// # Namenode HA
//
// An authority without a port that names a nameservice with
// dfs.ha.namenodes.<ns> = nn1,nn2 becomes the addresses
// dfs.namenode.rpc-address.<ns>.nn1, ... in that order. The library
// connects to the first that answers and moves to the next when a
// namenode answers with a StandbyException, so a failover costs one
// retried call. A nameservice with only dfs.namenode.rpc-address.<ns>
// (federation without HA) is that one namenode.
//
// # Users
//
// With simple authentication (the default) the namenode believes the user
// the client names: Options.User, else $HADOOP_USER_NAME, else the
// operating-system user, as the hadoop command does. Files are created as
// that user, and permission checks are that user's.
//
// # Kerberos
//
// When hadoop.security.authentication is kerberos the client authenticates
// with Kerberos, and the HDFS user is the principal's (HADOOP_USER_NAME is
// ignored; proxy users are not supported). The credentials come from:
//
//   - a keytab, if Options.Keytab or $TRAWL_HDFS_KEYTAB names one, for
//     the principal of Options.Principal or $TRAWL_HDFS_PRINCIPAL
//     ("name@REALM", or "name" in krb5.conf's default_realm), else for
//     the keytab's first entry. New logs in to the KDC; the Kerberos
//     library renews the ticket for as long as the FS lives. This is the
//     choice for cron jobs and services;
//   - otherwise the credential cache kinit wrote: Options.CCache, else
//     $KRB5CCNAME (FILE: caches only; KEYRING:, KCM: and DIR: caches are
//     refused with an error saying so), else /tmp/krb5cc_<uid>. A cache's
//     ticket is not renewed by trawl: it must outlive the command (kinit
//     again, or use a keytab, for long crawls).
//
// krb5.conf is Options.Krb5Conf, else the first file of $KRB5_CONFIG, else
// /etc/krb5.conf. The namenode's service principal is
// dfs.namenode.kerberos.principal (e.g. nn/_HOST@EXAMPLE.COM); the
// library puts each namenode's host, as written in its address, for
// _HOST, so use host names, not IP addresses, in dfs.namenode.rpc-address.
// The RPC protection the namenode asks for (hadoop.rpc.protection:
// authentication, integrity or privacy) is negotiated by the library.
// Data transfer protection (dfs.data.transfer.protection, or
// dfs.encrypt.data.transfer) is supported at all three levels: the
// library speaks SASL DIGEST-MD5 to the datanodes, with RC4 or, when the
// datanode offers it, AES/CTR for privacy; it has no 3DES.
//
// # Concurrency: a pool of clients
//
// A library Client is not safe for concurrent use (it caches the server
// defaults and the data encryption key without a lock), nor are the
// FileReader and FileWriter it returns (each is a seek offset and a
// datanode stream). The FS therefore keeps up to Options.Clients clients
// (default 4) and gives each call one client alone: an idle one if there
// is one, else a newly connected one, else it waits. A file opened for
// reading or writing stays on the client that opened it and takes that
// client for each read of a block, each flushed write buffer and each
// close. Each client is one namenode connection, renewing the leases of
// the files it writes.
//
// # Reading: why and how it is buffered
//
// Jobs read Parquet: the footer at the end of the file, then column
// chunks, each as many small ReadAt calls of a page or less. The
// library's ReadAt is a Seek and a Read, and its Seek drops the datanode
// stream unless the target lies a little ahead of it in the same block:
// every small ReadAt would be a new datanode connection and a round trip.
// So Open reads the last Options.FooterSize bytes (64 KiB) at once and
// keeps them: the Parquet footer and its length, and all of a small file
// (a lock file, a counters file). Every other read is served from aligned
// blocks of Options.ReadBlockSize bytes (4 MiB), each read whole in one
// request and kept in a small least-recently-used cache of
// Options.ReadCacheBlocks blocks (4) per open file, so a column chunk
// costs one round trip per 4 MiB instead of one per page, and the
// columns of a row group read side by side stay cached. A read of a block
// or more goes straight into the caller's buffer. Reading on where the
// previous request ended continues the same datanode stream, so a
// sequential scan is one stream. A read that fails is tried once more
// on a newly opened reader (the library keeps a reader's block
// locations and access tokens for as long as it is open). The cost is
// memory: up to FooterSize + ReadCacheBlocks × ReadBlockSize (16 MiB) per
// open file, freed by Close. Size is the length at Open.
//
// # Writing
//
// Create checks the parent directory, creates it (and its parents) if it
// is missing, and creates the file exclusively: an existing file or
// directory gives an error matching fs.ErrExist, so Create makes lock
// files. Writes go through a buffer of Options.WriteBufferSize bytes.
// Close sends the rest and completes the file on the namenode; when the
// namenode answers that the last block is not replicated yet (the
// library's ErrReplicating), Close asks again with backoff for up to
// Options.CloseRetryTimeout (60 s), as the Java client does. A file whose
// write failed is never completed, so it cannot pass for a whole file.
//
// # Renames and removals
//
// Rename keeps storage.FS's contract: a file at the new path is
// replaced, and an existing directory there makes Rename fail with an
// error matching fs.ErrExist, leaving both as they were. The library's
// Rename overwrites, and HDFS's overwriting rename replaces an empty
// directory with a directory; the FS checks the destination first so
// that publishing a job's output never replaces a CrawlDB another job
// published. RemoveAll deletes at once (no trash) and refuses "/".
//
// # Locks
//
// FS does not implement storage.Locker: HDFS has no lock that is released
// when its holder dies. Lock files are created exclusively and a lock
// older than the lock age limit is stale (see package crawldb).
//
// # Errors
//
// Errors are *fs.PathError (or *os.LinkError for Rename) naming the
// operation and the full hdfs URI. A missing path matches fs.ErrNotExist,
// a denied one fs.ErrPermission, an existing one fs.ErrExist; other
// namenode exceptions are shown by class and first line of message (a
// quota exceeded matches syscall.EDQUOT, a path through a file
// syscall.ENOTDIR).
//
// # Not supported
//
//   - HDFS transparent encryption: a file in an encryption zone is refused
//     by Open, and a directory in one by Create (the library would read
//     ciphertext and cannot create there). Hadoop 2 namenodes do not flag
//     such paths.
//   - Erasure-coded files and directories are refused likewise (the
//     library reads and writes replicated blocks only).
//   - Write pipeline recovery: a datanode failing while a block is written
//     fails the write (the library does not rebuild the pipeline), and a
//     NotReplicatedYetException when a new block is allocated is not
//     retried (the library's writer cannot resume); the job fails and its
//     retry starts over.
//   - Delegation tokens: the client needs Kerberos credentials itself
//     (inside YARN containers that hold only tokens it cannot log in).
//   - viewfs:// mount tables, webhdfs://, HttpFS, observer reads, hedged
//     reads, short-circuit local reads, appends (no job appends), trash.
//   - Timeouts and contexts on namenode calls: the library has none. The
//     connection is bounded by DialTimeout (and by the context of
//     NewContext), datanode transfers by IOTimeout; a namenode that
//     accepts a call and never answers holds it (TCP keep-alives end a
//     dead connection).
//   - Kerberos credential caches other than FILE, and renewal of a
//     cache's ticket.
package hdfs
