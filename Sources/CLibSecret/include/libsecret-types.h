// The few GLib, GIO and libsecret types tokenctl uses, declared here rather than taken
// from <libsecret/secret.h> (see libsecret-shim.h for why). Each matches its declaration
// in Debian's headers, whose ABI has been stable since GLib 2.0 and libsecret 0.18;
// Tests/Support/check-libsecret-declarations.sh compares them with those headers.
#ifndef TOKENCTL_LIBSECRET_TYPES_H
#define TOKENCTL_LIBSECRET_TYPES_H

#include <stddef.h>
#include <stdint.h>

typedef char gchar;
typedef int gint;
typedef int gboolean;
typedef unsigned int guint;
typedef uint32_t guint32;
typedef uint64_t guint64;
typedef signed long gint64;
typedef signed int gint32;
typedef unsigned char guint8;
typedef size_t gsize;
typedef ptrdiff_t gssize;
typedef void *gpointer;
typedef const void *gconstpointer;
typedef guint32 GQuark;

// Opaque: used only through pointers.
typedef struct _GHashTable GHashTable;
typedef struct _GMainContext GMainContext;
typedef struct _GMainLoop GMainLoop;
typedef struct _GSource GSource;
typedef struct _GThread GThread;
typedef struct _GVariant GVariant;
typedef struct _GVariantType GVariantType;
typedef struct _GCancellable GCancellable;
typedef struct _GDBusConnection GDBusConnection;
typedef struct _GDBusProxy GDBusProxy;
typedef struct _GObject GObject;
typedef struct _GAsyncResult GAsyncResult;
typedef struct _GDBusNodeInfo GDBusNodeInfo;
typedef struct _GDBusInterfaceInfo GDBusInterfaceInfo;
typedef struct _GDBusMethodInvocation GDBusMethodInvocation;
typedef struct _SecretService SecretService;
typedef struct _SecretCollection SecretCollection;
typedef struct _SecretItem SecretItem;
typedef struct _SecretValue SecretValue;
typedef struct _SecretSchema SecretSchema;

// Public structures whose fields are read, or that live on the caller's stack.
typedef struct _GError {
  GQuark domain;
  gint code;
  gchar *message;
} GError;

typedef struct _GList GList;
struct _GList {
  gpointer data;
  GList *next;
  GList *prev;
};

typedef struct _GHashTableIter {
  gpointer dummy1;
  gpointer dummy2;
  gpointer dummy3;
  int dummy4;
  gboolean dummy5;
  gpointer dummy6;
} GHashTableIter;

typedef void (*GDestroyNotify)(gpointer data);
typedef gboolean (*GSourceFunc)(gpointer user_data);
typedef gpointer (*GThreadFunc)(gpointer data);
typedef void (*GDBusSignalCallback)(
  GDBusConnection *connection, const gchar *sender_name, const gchar *object_path, const gchar *interface_name,
  const gchar *signal_name, GVariant *parameters, gpointer user_data);
typedef void (*GAsyncReadyCallback)(GObject *source_object, GAsyncResult *result, gpointer user_data);
typedef void (*GDBusInterfaceMethodCallFunc)(
  GDBusConnection *connection, const gchar *sender, const gchar *object_path, const gchar *interface_name,
  const gchar *method_name, GVariant *parameters, GDBusMethodInvocation *invocation, gpointer user_data);

// The agent registers methods only: no properties, so those two slots stay NULL.
typedef struct _GDBusInterfaceVTable {
  GDBusInterfaceMethodCallFunc method_call;
  gpointer get_property;
  gpointer set_property;
  gpointer padding[8];
} GDBusInterfaceVTable;

// The enumerations, with only the members tokenctl passes.
typedef enum { G_BUS_TYPE_SESSION = 2 } GBusType;
typedef enum { G_DBUS_CALL_FLAGS_NONE = 0, G_DBUS_CALL_FLAGS_NO_AUTO_START = 1 << 0 } GDBusCallFlags;
typedef enum { G_DBUS_SIGNAL_FLAGS_NONE = 0 } GDBusSignalFlags;
typedef enum { SECRET_SERVICE_NONE = 0 } SecretServiceFlags;
typedef enum { SECRET_COLLECTION_NONE = 0 } SecretCollectionFlags;
typedef enum { SECRET_ITEM_CREATE_NONE = 0 } SecretItemCreateFlags;
typedef enum { SECRET_ITEM_NONE = 0 } SecretItemFlags;
typedef enum {
  SECRET_SEARCH_NONE = 0,
  SECRET_SEARCH_ALL = 1 << 1,
  SECRET_SEARCH_UNLOCK = 1 << 2,
  SECRET_SEARCH_LOAD_SECRETS = 1 << 3,
} SecretSearchFlags;
typedef enum { SECRET_ERROR_IS_LOCKED = 2 } SecretError;

#define SECRET_COLLECTION_DEFAULT "default"

#endif
