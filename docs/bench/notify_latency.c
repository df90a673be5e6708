/*
 * Bare NOTIFY latency probe (docs/design-notes.md, "The latency floor"): one connection inserts a
 * row and NOTIFYs at a fixed rate, another LISTENs; prints commit and send->notification percentiles.
 *   gcc -O2 -o notify docs/bench/notify_latency.c -I/usr/include/postgresql -lpq -lpthread
 *   ./notify 200 5      # rate per second, seconds
 */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
static long now_ns(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
static volatile long sent[100000]; static long lat[100000]; static int n;
static void* listener(void*arg){
  PGconn*c=PQconnectdb("host=127.0.0.1 user=postgres dbname=test");
  PQclear(PQexec(c,"LISTEN floorc"));
  int got=0; int fd=PQsocket(c);
  while(got<n){ struct pollfd p={fd,POLLIN,0}; poll(&p,1,500); PQconsumeInput(c); PGnotify*nt;
    while((nt=PQnotifies(c))){ long t=now_ns(); int i=atoi(nt->extra); lat[i]=t-sent[i]; got++; PQfreemem(nt);} }
  return 0;}
int cmp(const void*a,const void*b){long x=*(long*)a,y=*(long*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){ int rate=atoi(argv[1]); n=rate*atoi(argv[2]);
  PGconn*c=PQconnectdb("host=127.0.0.1 user=postgres dbname=test");
  PQclear(PQexec(c,"create table if not exists floorc(id bigserial primary key, v int)"));
  pthread_t th; pthread_create(&th,0,listener,0); struct timespec s={0,200000000}; nanosleep(&s,0);
  long interval=1000000000L/rate; long start=now_ns(); long ins[100000];
  for(int i=0;i<n;i++){ long due=start+i*interval; long w=due-now_ns(); if(w>0){struct timespec ts={w/1000000000L,w%1000000000L}; nanosleep(&ts,0);}
    char q[200]; sprintf(q,"with i as (insert into floorc(v) values (1) returning id) select pg_notify('floorc','%d') from i",i);
    sent[i]=now_ns(); PQclear(PQexec(c,q)); ins[i]=now_ns()-sent[i]; }
  pthread_join(th,0); qsort(lat,n,sizeof(long),cmp); qsort(ins,n,sizeof(long),cmp);
  printf("rate=%d insert+notify commit p50=%.3f p99=%.3f; send->notification p50=%.3f p99=%.3f ms\n",rate,ins[n/2]/1e6,ins[n*99/100]/1e6,lat[n/2]/1e6,lat[n*99/100]/1e6);}
