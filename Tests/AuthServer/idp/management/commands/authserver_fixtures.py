"""Creates (or resets) the test users and OAuth applications, and prints them as JSON.

Passwords and the confidential client's secret are random on every call; client IDs are
fixed. The output is the "clients" and "users" part of server.json.
"""
import json
import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from oauth2_provider.models import get_application_model

USERS = [
    ("ada", "ada@example.test", "Ada", "Lovelace"),
    ("grace", "grace@example.test", "Grace", "Hopper"),
]
# RFC 8252 §7.3: loopback redirect URIs; DOT ignores the port of http://127.0.0.1 and
# http://[::1] redirect URIs when matching, path and query must match exactly.
NATIVE_REDIRECT_URIS = [
    "http://127.0.0.1/callback",
    "http://127.0.0.1/",
    "http://[::1]/callback",
    "http://[::1]/",
]


class Command(BaseCommand):
    help = "Create the tokenctl test users and OAuth clients; print them as JSON."

    def add_arguments(self, parser):
        parser.add_argument("--output", help="write the JSON here instead of stdout")

    @transaction.atomic
    def handle(self, *args, output=None, **options):
        User = get_user_model()
        Application = get_application_model()
        users = []
        for username, email, first, last in USERS:
            password = secrets.token_urlsafe(12)
            user, _ = User.objects.get_or_create(username=username)
            user.email, user.first_name, user.last_name = email, first, last
            user.set_password(password)
            user.save()
            users.append({"username": username, "password": password, "email": email, "sub": str(user.pk)})

        owner = User.objects.get(username="ada")

        def app(client_id, **fields):
            Application.objects.update_or_create(client_id=client_id, defaults={"user": owner, **fields})

        def public_app(client_id, name, grant, redirect_uris, **more):
            """A client without a secret whose ID tokens are signed with RS256."""
            app(client_id, name=name, client_type=Application.CLIENT_PUBLIC, authorization_grant_type=grant,
                redirect_uris=redirect_uris, algorithm=Application.RS256_ALGORITHM, client_secret="", **more)

        public_app("tokenctl-native", "tokenctl (native app)", Application.GRANT_AUTHORIZATION_CODE,
                   " ".join(NATIVE_REDIRECT_URIS), skip_authorization=False)
        # A desktop app as Microsoft registers one, for the `graph` type unchanged but for
        # its endpoints (the Graph example): redirect http://localhost on any port.
        public_app("tokenctl-graph", "tokenctl (Microsoft Graph desktop app)", Application.GRANT_AUTHORIZATION_CODE,
                   "http://localhost/", skip_authorization=False)
        public_app("tokenctl-device", "tokenctl (device)", Application.GRANT_DEVICE_CODE, "")
        service_secret = secrets.token_urlsafe(32)
        app(
            "tokenctl-service",
            name="tokenctl (service)",
            client_type=Application.CLIENT_CONFIDENTIAL,
            authorization_grant_type=Application.GRANT_CLIENT_CREDENTIALS,
            redirect_uris="",
            algorithm=Application.NO_ALGORITHM,
            client_secret=service_secret,
            hash_client_secret=True,
        )
        result = {
            "clients": {
                "native": {"client_id": "tokenctl-native", "redirect_uri": NATIVE_REDIRECT_URIS[0]},
                "graph": {"client_id": "tokenctl-graph", "redirect_uri": "http://localhost/"},
                "device": {"client_id": "tokenctl-device"},
                "service": {"client_id": "tokenctl-service", "client_secret": service_secret},
            },
            "users": users,
        }
        text = json.dumps(result, indent=2) + "\n"
        if output:
            with open(output, "w", encoding="utf-8") as f:
                f.write(text)
        else:
            self.stdout.write(text, ending="")
