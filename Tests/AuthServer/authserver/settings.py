"""Settings of the test authorization server (django-oauth-toolkit). See ../README.md.

Everything that varies per run comes from the environment, set by control.py:
  AUTH_SERVER_STATE_DIR   directory holding db.sqlite3 and oidc-rsa.pem
  AUTH_SERVER_PORT        the port the server listens on (127.0.0.1 only)
  AUTH_SERVER_DB          the sqlite file (default STATE_DIR/db.sqlite3)
  AUTH_SERVER_ACCESS_TOKEN_SECONDS   access token lifetime (default 3600)
  AUTH_SERVER_DEVICE_INTERVAL        RFC 8628 polling interval (default 1)
  AUTH_SERVER_AS_SHIPPED             1: refresh tokens behave as django-oauth-toolkit ships
                                     them (idp.validators.TestIdPValidator.as_shipped)
"""
import os
import secrets
from pathlib import Path

from .keys import ensure_rsa_key

BASE_DIR = Path(__file__).resolve().parent.parent
STATE_DIR = Path(
    os.environ.get("AUTH_SERVER_STATE_DIR") or BASE_DIR.parent.parent / ".build-python" / "auth-server" / "state"
)
STATE_DIR.mkdir(parents=True, exist_ok=True)
PORT = int(os.environ.get("AUTH_SERVER_PORT", "8000"))
BASE_URL = f"http://127.0.0.1:{PORT}"
ISSUER = f"{BASE_URL}/o"

# Per-process; sessions only have to survive one server run.
SECRET_KEY = os.environ.get("AUTH_SERVER_SECRET_KEY") or secrets.token_urlsafe(48)
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]"]

INSTALLED_APPS = [
    "idp",  # first, so that its templates override oauth2_provider's
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oauth2_provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
ROOT_URLCONF = "authserver.urls"
WSGI_APPLICATION = "authserver.wsgi.application"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]

# SQLite in WAL mode with IMMEDIATE transactions and a long busy timeout: the server is
# threaded and several test processes may hit it at once.
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("AUTH_SERVER_DB") or str(STATE_DIR / "db.sqlite3"),
        "OPTIONS": {
            "timeout": 30,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
        },
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Fixture passwords and client secrets are random per run; a cheap hash keeps logins and
# client authentication fast (Django's default costs ~1 s of CPU each).
PASSWORD_HASHERS = ["idp.hashers.FastPBKDF2PasswordHasher"]
AUTH_PASSWORD_VALIDATORS = []

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/accounts/done/"
USE_TZ = True
TIME_ZONE = "UTC"
LANGUAGE_CODE = "en-us"
USE_I18N = False

ACCESS_TOKEN_SECONDS = int(os.environ.get("AUTH_SERVER_ACCESS_TOKEN_SECONDS") or 3600)

OAUTH2_PROVIDER = {
    # OpenID Connect Core 1.0: ID tokens signed with RS256, key published at the JWKS URI.
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": ensure_rsa_key(STATE_DIR / "oidc-rsa.pem"),
    "OIDC_ISS_ENDPOINT": ISSUER,
    "OIDC_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": [
        "authorization_code",
        "refresh_token",
        "client_credentials",
        "urn:ietf:params:oauth:grant-type:device_code",
    ],
    "OAUTH2_VALIDATOR_CLASS": "idp.validators.TestIdPValidator",
    "SCOPES": {
        "openid": "OpenID Connect sign-in",
        "profile": "Your user name",
        "email": "Your e-mail address",
        "offline_access": "Access while you are away (refresh tokens)",
        "read": "Read access",
        "write": "Write access",
        # Microsoft Graph's, which the `graph` type asks for by default (the Graph example).
        "User.Read": "Read your profile",
        "User.ReadBasic.All": "Read all users' basic profiles",
    },
    "DEFAULT_SCOPES": ["read"],
    # `http://localhost` redirect URIs match any port, as Microsoft's do for desktop apps;
    # only the `graph` client registers one.
    "ALLOW_LOCALHOST_LOOPBACK": True,
    # RFC 7636 + RFC 9700 §2.1.1: PKCE for every authorization request, S256 only.
    "PKCE_REQUIRED": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    # RFC 9700: no implicit or password grants, no access tokens in query strings.
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    # RFC 9207: `iss` in the authorization response (mix-up defense).
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    # RFC 6749 §6 + RFC 9700 §4.14.2: rotate refresh tokens; replaying a used one
    # revokes the whole family.
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,
    "ACCESS_TOKEN_EXPIRE_SECONDS": ACCESS_TOKEN_SECONDS,
    "ID_TOKEN_EXPIRE_SECONDS": 3600,
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    # Always show the consent page, so the scripted browser can allow or deny.
    "REQUEST_APPROVAL_PROMPT": "force",
    # RFC 8628 device authorization grant.
    "OAUTH_DEVICE_VERIFICATION_URI": f"{BASE_URL}/o/device/",
    "OAUTH_DEVICE_VERIFICATION_URI_COMPLETE": f"{BASE_URL}/o/device/?user_code={{user_code}}",
    "DEVICE_FLOW_INTERVAL": int(os.environ.get("AUTH_SERVER_DEVICE_INTERVAL") or 1),
}

# Request lines are logged by control.py (paths only). Library loggers stay quiet below
# WARNING so that nothing token-like reaches server.log.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["stderr"], "level": "WARNING"},
    "loggers": {
        "oauthlib": {"level": "ERROR"},
        "oauth2_provider": {"level": "WARNING"},
        "django.request": {"level": "ERROR"},
        "django.security": {"level": "WARNING"},
    },
}
