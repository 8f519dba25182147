import hashlib
import json

from django.db import transaction
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider.compat import login_not_required
from oauth2_provider.oauth2_backends import get_oauthlib_core
from oauth2_provider.models import get_access_token_model, get_device_grant_model, get_refresh_token_model
from oauth2_provider.views import ConnectDiscoveryInfoView, OAuthServerMetadataView
from oauth2_provider.views import TokenView as DOTTokenView

# What this server really serves, beyond what DOT's discovery views list.
GRANT_TYPES = [
    "authorization_code",
    "refresh_token",
    "client_credentials",
    "urn:ietf:params:oauth:grant-type:device_code",
]


def _extend(view, request, response, oidc):
    data = json.loads(response.content)
    url = view._get_endpoint_url
    data["revocation_endpoint"] = url(request, "revoke-token", required=True)
    data["device_authorization_endpoint"] = url(request, "device-authorization", required=True)
    data["introspection_endpoint"] = url(request, "introspect", required=True)
    if oidc:
        data.setdefault("userinfo_endpoint", url(request, "user-info", required=True))
    data.setdefault("jwks_uri", url(request, "jwks-info", required=True))
    data["grant_types_supported"] = GRANT_TYPES
    data["response_types_supported"] = ["code"]
    data["response_modes_supported"] = ["query"]
    data["code_challenge_methods_supported"] = ["S256"]
    methods = ["client_secret_basic", "client_secret_post", "none"]
    data["token_endpoint_auth_methods_supported"] = methods
    data["revocation_endpoint_auth_methods_supported"] = methods
    data["introspection_endpoint_auth_methods_supported"] = ["client_secret_basic", "client_secret_post"]
    data["id_token_signing_alg_values_supported"] = ["RS256"]
    if "claims_supported" in data:
        data["claims_supported"] = sorted(data["claims_supported"])
    data["authorization_response_iss_parameter_supported"] = True
    data.pop("client_id_metadata_document_supported", None)
    extended = JsonResponse(data)
    extended["Access-Control-Allow-Origin"] = "*"
    return extended


class DiscoveryView(ConnectDiscoveryInfoView):
    """OpenID Connect Discovery 1.0 §3, plus RFC 8414 / RFC 8628 §4 / RFC 7009 fields."""

    def get(self, request, *args, **kwargs):
        return _extend(self, request, super().get(request, *args, **kwargs), oidc=True)


class ServerMetadataView(OAuthServerMetadataView):
    """RFC 8414 authorization server metadata with the same additions."""

    def get(self, request, *args, **kwargs):
        return _extend(self, request, super().get(request, *args, **kwargs), oidc=False)


@login_not_required
def healthz(request):
    return HttpResponse("ok\n", content_type="text/plain")


@csrf_exempt
@login_not_required
def resource(request, scope):
    """A protected resource (RFC 6750) that demands `scope`, through DOT's own token check:
    401 `invalid_token` for a token DOT does not accept at all, 403 `insufficient_scope`
    (§3.1) for one without the scope, else 200 with the token's scopes and client."""
    core = get_oauthlib_core()
    valid, answer = core.verify_request(request, scopes=[])
    if not valid:
        response = JsonResponse({"error": "invalid_token"}, status=401)
        response["WWW-Authenticate"] = 'Bearer error="invalid_token"'
        return response
    if not core.verify_request(request, scopes=[scope])[0]:
        response = JsonResponse({"error": "insufficient_scope", "scope": scope}, status=403)
        response["WWW-Authenticate"] = f'Bearer error="insufficient_scope", scope="{scope}"'
        return response
    token = answer.access_token
    return JsonResponse({"scope": token.scope, "client_id": token.application.client_id})


@csrf_exempt
@login_not_required
def issued(request):
    """For the tests only (loopback): whether this server issued the access token in the
    form field `token` and still holds it (not revoked, not deleted by a rotation), with
    its scopes, whether or not it has expired since. RFC 7662 introspection answers only
    `active`, which a 4-second token loses while a busy machine runs the test."""
    checksum = hashlib.sha256(request.POST.get("token", "").encode("utf-8")).hexdigest()
    token = get_access_token_model().objects.filter(token_checksum=checksum).first()
    if token is None:
        return JsonResponse({"issued": False})
    return JsonResponse({"issued": True, "scope": token.scope})


@csrf_exempt
@login_not_required
def live(request):
    """For the tests only (loopback): how many access tokens this server still holds and
    how many refresh tokens are still good (not revoked, not rotated out), for the tests of
    a grant tokenctl could not keep and must revoke (nobody else knows its tokens)."""
    return JsonResponse(
        {
            "access_tokens": get_access_token_model().objects.count(),
            "refresh_tokens": get_refresh_token_model().objects.filter(revoked__isnull=True).count(),
        }
    )


def signed_in(request):
    return HttpResponse("Signed in.\n", content_type="text/plain")


class TokenView(DOTTokenView):
    """DOT's token endpoint with three fixes to device-code polling (RFC 8628 §3.5):

    - a device_code is good for one token response (DOT would hand out tokens again);
    - an unknown, redeemed or other client's device_code gives `invalid_grant` (RFC 6749
      §5.2) instead of DOT's 404 `device_not_found`;
    - past its expiry a device_code gives `expired_token`, not `authorization_pending`.
    """

    def device_flow_token_response(self, request, device_code, *args, **kwargs):
        model = get_device_grant_model()
        with transaction.atomic():
            device = model.objects.filter(device_code=device_code).first()
            client_id = request.POST.get("client_id")
            if device is None or (client_id and client_id != device.client_id):
                return JsonResponse(
                    {"error": "invalid_grant", "error_description": "Unknown or already used device_code."},
                    status=400,
                )
            device.is_expired()  # marks it expired when past its deadline
            response = super().device_flow_token_response(request, device_code, *args, **kwargs)
            if response.status_code == 200:
                device.delete()
        return response
