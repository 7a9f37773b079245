"""A throw-away CA and a server certificate for 127.0.0.1, made with the openssl CLI, for the
tests that run the Helm chart's TLS and basic-auth deployments (compat_test, image_test)."""
import os
import ssl
import subprocess


def make_test_ca(directory, ca_name):
    """Writes ca.crt/ca.key and tls.crt/tls.key (world-readable: the daemon may run as another
    user) into `directory`; returns a client SSLContext that trusts the CA."""
    os.makedirs(directory)
    subprocess.run(f"openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN={ca_name} "
                   "-keyout ca.key -out ca.crt && openssl req -newkey rsa:2048 -nodes "
                   "-subj /CN=dcgm-exporter -keyout tls.key -out tls.csr && "
                   "printf 'subjectAltName=IP:127.0.0.1\\n' > ext && openssl x509 -req -in tls.csr "
                   "-CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile ext -out tls.crt && "
                   "chmod 644 tls.key",
                   shell=True, cwd=directory, check=True, capture_output=True)
    return ssl.create_default_context(cafile=os.path.join(directory, "ca.crt"))
