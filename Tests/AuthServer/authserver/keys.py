"""The RS256 key that signs ID tokens: generated once per state dir, never committed."""
import os


def ensure_rsa_key(path):
    """Returns the PEM of the private key at `path`, creating it (mode 0600) if missing."""
    try:
        with open(path, encoding="ascii") as f:
            return f.read()
    except FileNotFoundError:
        pass
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode("ascii")
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(pem)
    os.replace(tmp, path)
    with open(path, encoding="ascii") as f:  # another process may have won the race
        return f.read()
