from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path
from oauth2_provider import urls as dot_urls

from idp import views

urlpatterns = [
    # Discovery documents that also advertise what DOT serves but does not list
    # (device authorization, revocation, grant types); they shadow DOT's own views.
    re_path(
        r"^o/\.well-known/openid-configuration/?$",
        views.DiscoveryView.as_view(),
        name="openid-configuration",
    ),
    path(
        "o/.well-known/oauth-authorization-server",
        views.ServerMetadataView.as_view(),
        name="oauth-authorization-server",
    ),
    # RFC 8414 §3: the path-component form for the issuer http://127.0.0.1:PORT/o.
    path(
        ".well-known/oauth-authorization-server/o",
        views.ServerMetadataView.as_view(),
        name="oauth-authorization-server-root",
    ),
    path("o/token/", views.TokenView.as_view(), name="token"),
    path("o/", include((dot_urls.base_urlpatterns + dot_urls.oidc_urlpatterns, "oauth2_provider"))),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/done/", views.signed_in, name="signed-in"),
    path("healthz", views.healthz, name="healthz"),
    # For the tests only: whether the server issued a token and still holds it.
    path("_test/issued", views.issued, name="issued"),
    # For the tests only: how many access and refresh tokens are still good.
    path("_test/live", views.live, name="live"),
    # A resource that demands one scope: /api/read/, /api/write/ (tokens for other scopes).
    path("api/<str:scope>/", views.resource, name="resource"),
]
