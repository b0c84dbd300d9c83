/* One pointer per thread for QuireHTTP's ThreadRequestCache: see quire_framing.h. */
#include <pthread.h>
#include <stddef.h>

#include "quire_framing.h"

static __thread void *request_cache;
static pthread_key_t ending;
static pthread_once_t ending_made = PTHREAD_ONCE_INIT;
static int ending_error;
static void (*release_cache) (void *);

static void
thread_ends (void *cache)
{
  request_cache = NULL;
  if (NULL != cache && NULL != release_cache)
    release_cache (cache);
}

static void
make_ending (void)
{
  ending_error = pthread_key_create (&ending, thread_ends);
}

void *
quire_thread_request_cache (void)
{
  return request_cache;
}

int
quire_thread_set_request_cache (void *cache, void (*release) (void *))
{
  request_cache = cache;
  pthread_once (&ending_made, make_ending);
  if (0 != ending_error)
    return ending_error;
  release_cache = release; /* the same function from every thread */
  return pthread_setspecific (ending, cache);
}
